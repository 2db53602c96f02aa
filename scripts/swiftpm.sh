# Sourced by the scripts that build: `swiftpm swift build …` runs SwiftPM with one warning
# removed from its stderr. pkg-config hands SwiftPM glib's `-pthread` (vips.pc requires
# gthread-2.0), which SwiftPM refuses for a system-library target and reports on every build as
# "prohibited flag(s): -pthread"; it drops the flag, and nothing is lost (pthreads are part of
# glibc since 2.34). The same for libraw_r.pc's `-fopenmp`: the CLibRaw module map links
# libgomp itself. And libjxl.pc's `-DHWY_SHARED_DEFINE` (a define for C++ users of its Highway
# headers, which nothing here includes). The exit status is SwiftPM's.
swiftpm() {
  "$@" 2> >(sed -u -e '/warning: prohibited flag(s): -pthread/d' -e '/warning: prohibited flag(s): -fopenmp/d' \
    -e '/warning: prohibited flag(s): -DHWY_SHARED_DEFINE/d' >&2)
}

# The version scripts/install builds the binary as: ThumbframeVersion.release, or between
# releases release+N.gHASH, N the commits since the one that last set the release and HASH the
# checkout's commit, so that every later build is an upgrade (dpkg: 0.5.0 < 0.5.0+1.g… < 0.5.1).
# Outside a git checkout: the release.
build_version() {
  local file=Sources/ThumbframeCore/Support/ThumbframeVersion.swift release base count
  release="$(sed -n 's/.*static let release = "\([^"]*\)".*/\1/p' "$file")"
  base="$(git log -1 --format=%H -G 'static let release = ' -- "$file" 2>/dev/null || true)"
  count="$( [[ -n "$base" ]] && git rev-list --count "$base..HEAD" 2>/dev/null || echo 0)"
  if ((count > 0)); then
    echo "$release+$count.g$(git rev-parse --short=7 HEAD)"
  else
    echo "$release"
  fi
}
