#ifndef TF_SANDBOX_H
#define TF_SANDBOX_H

// What a decode worker drops before it reads a file (Sources/ThumbframeImaging/WorkerSandbox.swift):
// its death with its parent, new privileges, system calls a decoder never needs (seccomp-bpf) and
// every path outside the trees it is given (Landlock). Each returns 0, or an errno saying why the
// kernel (or a container) refused it.

#ifdef THUMBFRAME_IMAGING

#include <stddef.h>

/// PR_SET_PDEATHSIG (SIGKILL) and PR_SET_NO_NEW_PRIVS: the worker dies with the build (`parent`,
/// its pid; a worker whose parent is already another exits), and neither it nor anything it could
/// start gains privileges.
int tf_sandbox_prepare(int parent);

/// Started as root: every capability leaves the bounding, ambient, permitted and effective sets,
/// and the process becomes `uid`:`gid` with no supplementary groups where `uid` is not negative.
int tf_sandbox_drop_capabilities(long uid, long gid);

/// A seccomp-bpf allowlist: what the decoders call on their own memory, threads and descriptors,
/// signals and scheduling for the worker itself only, no shared anonymous memory, a few prctl and
/// ioctl requests; mode and owner changes fail with EPERM, clone3 with ENOSYS (glibc then makes
/// threads with clone, whose flags the filter reads: only CLONE_THREAD passes); any other call
/// kills the worker.
int tf_sandbox_seccomp(void);

/// A Landlock ruleset (any ABI from 1, every right the running kernel knows handled: truncate,
/// ioctl on devices, TCP, signals and abstract sockets outside the sandbox): reading files and directories beneath each of `read_fds`,
/// reading and writing (files and directories made, removed, truncated) beneath each of
/// `write_fds`; nothing else. `abi` receives the kernel's Landlock ABI (0: none).
int tf_sandbox_landlock(const int *read_fds, int read_count, const int *write_fds, int write_count, int *abi);

/// sendmsg of `count` bytes with `fd` attached (SCM_RIGHTS): bytes sent, or -1 with errno.
int tf_send_descriptor(int socket, const void *bytes, size_t count, int fd);

/// recvmsg into `bytes`, descriptors attached put in `fds` (at most `capacity`, close-on-exec; the
/// rest closed), their number in `received`: bytes read, or -1 with errno.
long tf_receive_with_descriptors(int socket, void *bytes, size_t count, int *fds, int capacity, int *received);

#endif
#endif
