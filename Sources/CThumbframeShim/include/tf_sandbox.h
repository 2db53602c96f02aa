#ifndef TF_SANDBOX_H
#define TF_SANDBOX_H

// What a decode worker drops before it reads a file (Sources/ThumbframeImaging/WorkerSandbox.swift):
// its death with its parent, new privileges, system calls a decoder never needs (seccomp-bpf) and
// every path outside the trees it is given (Landlock). Each returns 0, or an errno saying why the
// kernel (or a container) refused it.

#ifdef THUMBFRAME_IMAGING

/// PR_SET_PDEATHSIG (SIGKILL) and PR_SET_NO_NEW_PRIVS: the worker dies with the build (`parent`,
/// its pid; a worker whose parent is already another exits), and neither it nor anything it could
/// start gains privileges.
int tf_sandbox_prepare(int parent);

/// A seccomp-bpf filter: new sockets, exec, ptrace, forking, mounts, namespaces, keyrings, BPF, perf,
/// modules, io_uring and the like fail with EPERM (clone3 with ENOSYS, so glibc makes threads with
/// clone, whose flags the filter can read: only CLONE_THREAD clones pass).
int tf_sandbox_seccomp(void);

/// A Landlock ruleset (any ABI from 1): reading files and directories beneath each of `read_fds`,
/// reading and writing (files and directories made, removed, truncated) beneath each of
/// `write_fds`; nothing else. `abi` receives the kernel's Landlock ABI (0: none).
int tf_sandbox_landlock(const int *read_fds, int read_count, const int *write_fds, int write_count, int *abi);

#endif
#endif
