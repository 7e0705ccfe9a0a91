#!/usr/bin/env bash
# Fetches the Debian Administrator's Handbook (Debian package
# `debian-handbook`, GPL-2.0+ or CC-BY-SA-3.0) and keeps its English HTML
# pages (en-US) as a corpus for groundcite.
#
#   bench/corpora/debian-handbook/fetch.sh [TARGET_DIR]
#
# TARGET_DIR defaults to target/corpora/debian-handbook under the repository
# root. It receives the 127 HTML pages of html/en-US/ (flat, no images or
# stylesheets) and the package's `copyright` file (its license text; no
# extension, so `groundcite ingest` skips it). The .deb's SHA-256 is pinned
# below; nothing lands in TARGET_DIR unless it matches. Running it again when
# TARGET_DIR is complete does nothing. Needs apt-get (or curl) and dpkg-deb.
# On success the last line printed is TARGET_DIR.
set -euo pipefail

PACKAGE=debian-handbook
VERSION=11.20220922
DEB=${PACKAGE}_${VERSION}_all.deb
DEB_SHA256=3d5dbeac1f1afc9c094eab9d0f701f6ecff99c4927d5a4794cf6c85678134faa
# Used only when apt-get cannot download that version (not a Debian system,
# or its sources do not carry it); the checksum above still applies.
POOL_URL=https://deb.debian.org/debian/pool/main/d/debian-handbook/$DEB
LANGUAGE=en-US
PAGES=127
STAMP=.complete

die() { echo "fetch-debian-handbook: $*" >&2; exit 1; }
say() { echo "fetch-debian-handbook: $*" >&2; }

root="$(cd "$(dirname "$0")/../../.." && pwd)"
target="${1:-$root/target/corpora/$PACKAGE}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
want_stamp="$PACKAGE $VERSION $LANGUAGE $PAGES pages"

if [ -f "$target/$STAMP" ] && [ "$(cat "$target/$STAMP")" = "$want_stamp" ]; then
  say "$target already holds $PACKAGE $VERSION ($LANGUAGE)"
  echo "$target"
  exit 0
fi

# Only a folder this script wrote (it has the stamp) is ever replaced.
if [ -e "$target" ] && [ ! -f "$target/$STAMP" ] && [ -n "$(ls -A "$target" 2>/dev/null)" ]; then
  die "$target exists, is not empty and was not written by this script: choose another folder"
fi

command -v dpkg-deb >/dev/null || die "dpkg-deb not found (package dpkg)"
command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"

mkdir -p "$(dirname "$target")"
work="$(mktemp -d "$(dirname "$target")/.fetch-$PACKAGE.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# apt-get drops privileges to _apt for downloads; let it write here.
chmod 755 "$work"
mkdir "$work/deb"
chmod 777 "$work/deb"

download_apt() {
  command -v apt-get >/dev/null || return 1
  (cd "$work/deb" && apt-get download -q "$PACKAGE=$VERSION" >&2)
}
download_pool() {
  command -v curl >/dev/null || return 1
  say "apt-get could not download $PACKAGE=$VERSION; trying $POOL_URL"
  curl -fsSL -o "$work/deb/$DEB" "$POOL_URL" >&2
}

say "downloading $PACKAGE=$VERSION (35 MB)"
if ! download_apt; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "updating the package lists (apt-get update) and trying again"
    apt-get update -qq >&2 || true
    download_apt || download_pool || die "could not download $PACKAGE=$VERSION"
  else
    download_pool || die "could not download $PACKAGE=$VERSION (as root, run apt-get update first)"
  fi
fi
[ -f "$work/deb/$DEB" ] || die "the download did not produce $DEB (got: $(ls "$work/deb"))"

got="$(sha256sum "$work/deb/$DEB" | cut -d' ' -f1)"
[ "$got" = "$DEB_SHA256" ] \
  || die "$DEB has SHA-256 $got, expected $DEB_SHA256: refusing to use it"

dpkg-deb -x "$work/deb/$DEB" "$work/x"
doc="$work/x/usr/share/doc/$PACKAGE"
[ -f "$doc/copyright" ] || die "$DEB has no usr/share/doc/$PACKAGE/copyright"
mkdir "$work/out"
cp "$doc/html/$LANGUAGE/"*.html "$work/out/"
cp "$doc/copyright" "$work/out/copyright"
n="$(find "$work/out" -maxdepth 1 -name '*.html' | wc -l)"
[ "$n" -eq "$PAGES" ] || die "expected $PAGES HTML pages in html/$LANGUAGE, found $n"
echo "$want_stamp" >"$work/out/$STAMP"

# Replace the target only once everything is in place.
rm -rf "$target"
mv "$work/out" "$target"
say "wrote $n pages and the license (copyright) to $target"
echo "$target"
