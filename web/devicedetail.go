package web

import (
	"net/http"

	"github.com/tidings-dev/tidings"
)

// deviceData is one device's page: where it gets notifications from, a test, a
// new name, and its removal in a danger zone.
type deviceData struct {
	Device   *tidings.PushSubscription
	MaxNames int
}

func (s *Server) devicePage(w http.ResponseWriter, r *http.Request) error {
	return s.renderDevice(w, r, http.StatusOK, "")
}

// renderDevice shows the device of the URL; a device of someone else (of this team or
// another) is not found, like one that does not exist.
func (s *Server) renderDevice(w http.ResponseWriter, r *http.Request, status int, msg string) error {
	sub, err := s.store.FindPushSubscription(r.Context(), r.PathValue("id"))
	if tidings.ErrorCode(err) == tidings.ENotFound || err == nil && sub.UserID != sessionFrom(r).user.ID {
		return tidings.Errorf(tidings.ENotFound, "There is no such device of yours.")
	}
	if err != nil {
		return err
	}
	return s.render(w, r, "device", &view{Title: deviceLabel(sub) + " · Devices", Tab: "devices", Section: "settings", Status: status, Error: msg,
		Data: deviceData{Device: sub, MaxNames: maxDeviceName}})
}

// deviceLabel names a device: the name its owner gave, or its browser.
func deviceLabel(d *tidings.PushSubscription) string {
	if d.Name != "" {
		return d.Name
	}
	return d.Browser
}
