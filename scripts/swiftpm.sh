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
