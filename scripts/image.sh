#!/usr/bin/env bash
# Builds the static tidings binary and the container image (Containerfile) around it,
# with whichever of docker, podman or buildah works here (docker only when its daemon
# answers). Needs Go; the image build itself pulls nothing (FROM scratch).
#
#   scripts/image.sh                       # → tidings:latest
#   TAG=registry.example.com/tidings:1.2 scripts/image.sh
#
# TAG          the image's name (default tidings:latest)
# BUILDER      docker, podman or buildah: use this one instead of the first that works
# STORAGE_DRIVER, BUILDAH_ISOLATION   buildah's (e.g. vfs and chroot where overlay
#              mounts and namespaces are not allowed); passed on as --storage-driver
#              and --isolation
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

TAG="${TAG:-tidings:latest}"

builder="${BUILDER:-}"
if [ -z "$builder" ]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    builder=docker
  elif command -v podman >/dev/null 2>&1; then
    builder=podman
  elif command -v buildah >/dev/null 2>&1; then
    builder=buildah
  else
    echo "image.sh: none of docker (with a running daemon), podman or buildah is installed" >&2
    exit 1
  fi
fi

# The commit and the build date go into `tidings version`; "-dirty" when the work tree
# has changes that are not committed.
commit=$(git rev-parse HEAD 2>/dev/null || true)
if [ -n "$commit" ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit-dirty"
fi
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# The build context: the binary and two folders, nothing else of the repository. One
# per run, so that builds side by side (tests, two tags) do not share it.
mkdir -p dist
context=$(mktemp -d dist/image.XXXXXX)
trap 'rm -rf "$context"' EXIT
# /tmp for everyone (sticky), /data the server's alone; Containerfile copies them.
mkdir -p "$context/root/tmp" "$context/owned/data"
chmod 1777 "$context/root/tmp"
chmod 0700 "$context/owned/data"
echo "image.sh: go build → $context/tidings (commit ${commit:-unknown})"
CGO_ENABLED=0 go build -buildvcs=false \
  -ldflags "-s -w -X main.commit=$commit -X main.buildDate=$date" \
  -o "$context/tidings" ./cmd/tidings
cp Containerfile "$context/Containerfile"

echo "image.sh: $builder → $TAG"
case "$builder" in
  docker)
    docker build -t "$TAG" -f "$context/Containerfile" "$context" ;;
  podman)
    # The docker format keeps HEALTHCHECK (OCI image configs have no such field).
    podman build --format docker -t "$TAG" -f "$context/Containerfile" "$context" ;;
  buildah)
    opts=()
    [ -n "${STORAGE_DRIVER:-}" ] && opts+=(--storage-driver "$STORAGE_DRIVER")
    iso=()
    [ -n "${BUILDAH_ISOLATION:-}" ] && iso+=(--isolation "$BUILDAH_ISOLATION")
    buildah "${opts[@]}" bud --format docker "${iso[@]}" -t "$TAG" -f "$context/Containerfile" "$context" ;;
  *)
    echo "image.sh: BUILDER=$builder: docker, podman or buildah" >&2
    exit 1 ;;
esac
echo "image.sh: built $TAG"
