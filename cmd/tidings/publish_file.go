package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tidings-dev/tidings"
	"github.com/tidings-dev/tidings/client"
)

// A file's events go in batches of at most client.MaxBatch events and batchBytes bytes
// (the server takes 1 MiB; the rest is room for the batch's own JSON).
const (
	batchBytes = 1000 << 10
	maxLine    = 64 << 10 // the largest body POST /v1/log takes
	maxShown   = 20       // refused lines listed one by one
)

// fileBatch is the events of a file not sent yet, with their line numbers.
type fileBatch struct {
	events []json.RawMessage
	lines  []int
	bytes  int
}

// fileSend is what a file's sending has done so far.
type fileSend struct {
	c              *cli
	cl             *client.Client
	batches        int
	stored, events int
	refused        []string // "line N: why"
	progress       bool     // standard error is a terminal
}

// publishFile sends a file of events, one JSON object per line, in batches. Each batch
// has its idempotency key (--idempotency-key K makes them K-1, K-2, …: the same file
// sent again with K stores nothing twice). It says on standard error which lines were
// refused and why, and fails if any was.
func publishFile(ctx context.Context, c *cli) error {
	if c.pub.event != "" || c.pub.description != "" || c.pub.icon != "" || len(c.pub.tags) > 0 || c.pub.notify || c.pub.markdown || c.pub.userID != "" {
		return errors.New("--file sends the events of a file: give each event's fields in its line, not as flags (-p and -c may fill in project and channel)")
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	var in io.Reader = c.stdin
	name := "standard input"
	if c.pub.file != "-" {
		f, err := os.Open(c.pub.file)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, c.pub.file
	}
	fs := &fileSend{c: c, cl: cl, progress: isTerminal(c.stderr)}
	var b fileBatch
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine+1)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs.events++
		ev, err := c.fileEvent(line)
		if err != nil {
			fs.refused = append(fs.refused, fmt.Sprintf("line %d: %v", n, err))
			continue
		}
		if len(b.events) == client.MaxBatch || b.bytes+len(ev)+1 > batchBytes {
			if err := fs.send(ctx, &b); err != nil {
				return err
			}
		}
		b.events, b.lines, b.bytes = append(b.events, ev), append(b.lines, n), b.bytes+len(ev)+1
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("a line is longer than %d KiB, the most an event may take", maxLine>>10)
		}
		return fmt.Errorf("%s: %w (%d events were stored before)", name, err, fs.stored)
	}
	if err := fs.send(ctx, &b); err != nil {
		return err
	}
	return fs.summary()
}

// fileEvent checks one line and fills in -p and -c where it leaves them out.
func (c *cli) fileEvent(line string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &obj); err != nil || obj == nil {
		return nil, errors.New("not a JSON object (one event per line, as POST /v1/log takes it)")
	}
	filled := false
	for key, v := range map[string]string{"project": c.project, "channel": c.channel} {
		if _, ok := obj[key]; !ok && v != "" {
			obj[key], _ = json.Marshal(v)
			filled = true
		}
	}
	if !filled {
		return json.RawMessage(line), nil
	}
	return json.Marshal(obj)
}

// send sends the batch, if it holds anything, and empties it.
func (fs *fileSend) send(ctx context.Context, b *fileBatch) error {
	if len(b.events) == 0 {
		return nil
	}
	fs.batches++
	var opts []client.Option
	if fs.c.pub.key != "" {
		opts = keyOption(fmt.Sprintf("%s-%d", fs.c.pub.key, fs.batches))
	}
	res, err := fs.cl.PublishRaw(ctx, b.events, opts...)
	if err != nil {
		return fmt.Errorf("lines %d to %d: %w (%d events were stored before them)", b.lines[0], b.lines[len(b.lines)-1], err, fs.stored)
	}
	for i, r := range res {
		if r.Err != nil {
			fs.refused = append(fs.refused, fmt.Sprintf("line %d: %s", b.lines[i], problemText(r.Err)))
		} else {
			fs.stored++
		}
	}
	if fs.progress {
		fmt.Fprintf(fs.c.stderr, "\r%d events stored, %d refused…", fs.stored, len(fs.refused))
	}
	*b = fileBatch{}
	return nil
}

// problemText is an event's refusal in a line: its code and what to fix.
func problemText(err error) string {
	var p *client.Problem
	if errors.As(err, &p) {
		return fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail)
	}
	return tidings.ErrorMessage(err)
}

// summary says what was stored and lists the refused lines; it fails if any was refused.
func (fs *fileSend) summary() error {
	if fs.progress {
		fmt.Fprint(fs.c.stderr, "\r\033[K")
	}
	fmt.Fprintf(fs.c.stdout, "%d of %d events stored, in %s\n", fs.stored, fs.events, plural(fs.batches, "request"))
	if len(fs.refused) == 0 {
		return nil
	}
	for i, r := range fs.refused {
		if i == maxShown {
			fmt.Fprintf(fs.c.stderr, "… and %d more refused lines\n", len(fs.refused)-maxShown)
			break
		}
		fmt.Fprintln(fs.c.stderr, r)
	}
	return fmt.Errorf("%d of %d events were refused (listed above); correct those lines and send them again", len(fs.refused), fs.events)
}
