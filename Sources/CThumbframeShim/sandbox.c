// The decode worker's sandbox (include/tf_sandbox.h).
#define _GNU_SOURCE
#include "tf_sandbox.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <grp.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/capability.h>
#include <linux/landlock.h>
#include <seccomp.h>
#endif

#ifdef __linux__
// What Debian 12's 6.1 headers lack of Landlock, from the kernel's uapi (the running kernel's ABI
// says which of them it knows: tf_sandbox_landlock probes it).
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

// The ruleset's attributes as ABI 6 knows them; an older kernel is given the prefix it knows.
struct tf_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
#endif

int tf_sandbox_prepare(int parent) {
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
    // The parent may have died between the spawn and here: then this worker has nothing to do.
    if (getppid() != parent) _exit(0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    // No core file: a crash's memory is the file's pixels, and a dump is a write.
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    return 0;
#else
    (void) parent;
    return ENOSYS;
#endif
}

int tf_sandbox_drop_capabilities(long uid, long gid) {
#ifdef __linux__
    // A build started as root: every capability leaves the bounding, ambient, permitted and
    // effective sets, and the worker becomes `uid`/`gid` (nobody) where one is given. It needs
    // nothing of root's: its file comes open, it reads /usr and thumbs/ and writes only the
    // scratch folder the build made for it (and gave to that user).
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
    for (int capability = 0; capability <= 63; capability++) {
        if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) < 0) break;
        if (prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 && errno != EPERM) return errno;
    }
    if (uid >= 0 && gid >= 0) {
        if (setgroups(0, NULL) != 0) return errno;
        if (setresgid((gid_t) gid, (gid_t) gid, (gid_t) gid) != 0) return errno;
        if (setresuid((uid_t) uid, (uid_t) uid, (uid_t) uid) != 0) return errno;
    }
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &header, data) != 0) return errno;
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) return errno;
    return 0;
#else
    return ENOSYS;
#endif
}

#ifdef __linux__
// Adds `action` for `name` (with `count` argument comparisons); a name the running libseccomp
// or kernel does not know is skipped.
static int rule(scmp_filter_ctx filter, uint32_t action, const char *name, unsigned count, ...) {
    int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR) return 0;
    struct scmp_arg_cmp comparisons[3];
    va_list arguments;
    va_start(arguments, count);
    for (unsigned i = 0; i < count && i < 3; i++)
        comparisons[i] = va_arg(arguments, struct scmp_arg_cmp);
    va_end(arguments);
    return seccomp_rule_add_array(filter, action, number, count, comparisons);
}
#endif

int tf_sandbox_seccomp(void) {
#ifdef __linux__
    // An allowlist: what the decoders (libvips and its loaders, libexif, libheif, libjxl, LibRaw,
    // FFmpeg with x264) and the worker's own code call, measured under strace over the corpus and
    // the test suite's fixtures, and nothing else: any other system call kills the worker, which
    // fails its file ("decoder crashed (SIGSYS)"). Calls whose reach is the process's own (its
    // memory, threads, descriptors, clock) are allowed whole; those that can reach another process
    // or file only with arguments the filter checks.
    // clang-format off: a table, filled line by line
    static const char *const allowed[] = {
        // Descriptors it holds: its socket, its file, what Landlock lets it open.
        "read",
        "write",
        "pread64",
        "pwrite64",
        "readv",
        "writev",
        "preadv",
        "pwritev",
        "preadv2",
        "pwritev2",
        "lseek",
        "_llseek",
        "close",
        "close_range",
        "dup",
        "dup2",
        "dup3",
        "fcntl",
        "fcntl64",
        "poll",
        "ppoll",
        "select",
        "pselect6",
        "pipe",
        "pipe2",
        "eventfd2",
        "epoll_create1",
        "epoll_ctl",
        "epoll_wait",
        "epoll_pwait",
        "sendto",
        "recvfrom",
        "sendmsg",
        "recvmsg",
        "fadvise64",
        "readahead",
        // Paths, which Landlock confines to the trees it grants.
        "open",
        "openat",
        "openat2",
        "stat",
        "fstat",
        "lstat",
        "newfstatat",
        "statx",
        "fstatfs",
        "statfs",
        "access",
        "faccessat",
        "faccessat2",
        "getdents64",
        "readlink",
        "readlinkat",
        "getcwd",
        "mkdir",
        "mkdirat",
        "rename",
        "renameat",
        "renameat2",
        "unlink",
        "unlinkat",
        "rmdir",
        "fsync",
        "fdatasync",
        "syncfs",
        "ftruncate",
        "umask",
        // Its own memory (shared anonymous mappings, which RLIMIT_DATA does not count, below).
        "brk",
        "munmap",
        "mremap",
        "mprotect",
        "madvise",
        "mincore",
        "msync",
        "mlock",
        "mlock2",
        "munlock",
        "membarrier",
        // Its own threads (clone below).
        "futex",
        "futex_waitv",
        "set_robust_list",
        "get_robust_list",
        "rseq",
        "set_tid_address",
        "gettid",
        "exit",
        "exit_group",
        "sched_yield",
        "sched_getaffinity",
        "sched_getparam",
        "sched_getscheduler",
        "sched_get_priority_max",
        "sched_get_priority_min",
        "sched_getattr",
        "getpriority",
        "getcpu",
        "arch_prctl",
        // Signals to itself (kill and tgkill below), identity, time, randomness.
        "rt_sigaction",
        "rt_sigprocmask",
        "rt_sigreturn",
        "sigaltstack",
        "rt_sigtimedwait",
        "rt_sigsuspend",
        "getpid",
        "getppid",
        "getuid",
        "geteuid",
        "getgid",
        "getegid",
        "getresuid",
        "getresgid",
        "getgroups",
        "getrusage",
        "times",
        "getrlimit",
        "uname",
        "sysinfo",
        "clock_gettime",
        "clock_getres",
        "clock_nanosleep",
        "nanosleep",
        "gettimeofday",
        "time",
        "getrandom",
        "capget",
        // Filters only narrow what is allowed.
        "seccomp",
        "landlock_create_ruleset",
        "landlock_add_rule",
        "landlock_restrict_self",
    };
    // Refused with an error rather than the worker killed: libgsf (dzsave's tiles) sets the mode
    // and owner of what it writes, and a failure there is not one.
    static const char *const refused[] = {
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    };
    // clang-format on
    // A kernel or container without the seccomp system call knows no KILL_PROCESS: a trap, whose
    // SIGSYS the worker leaves at its default (death), does the same there.
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (filter == NULL) filter = seccomp_init(SCMP_ACT_TRAP);
    if (filter == NULL) return ENOMEM;
    // The kernel's own error when it refuses the filter (a container's profile), not
    // libseccomp's ECANCELED.
    int status = seccomp_attr_set(filter, SCMP_FLTATR_API_SYSRAWRC, 1);
    // A binary tree of system-call numbers: every allowed call (most are futex, read, write)
    // passes a few comparisons, not the whole list (libseccomp ≥ 2.5).
    if (status == 0) status = seccomp_attr_set(filter, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0] && status == 0; i++)
        status = rule(filter, SCMP_ACT_ALLOW, allowed[i], 0);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0] && status == 0; i++)
        status = rule(filter, SCMP_ACT_ERRNO(EPERM), refused[i], 0);
    const scmp_datum_t self = (scmp_datum_t) getpid();
    // Threads only: glibc falls back from clone3 (whose flags live in memory a filter cannot
    // read) to clone, whose flags are its first argument.
    if (status == 0) status = rule(filter, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0);
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "clone", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    // Mappings: anything but shared anonymous memory (not counted by RLIMIT_DATA).
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "mmap", 1, SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0));
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "mmap", 1, SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_SHARED, 0));
    // Signals to itself and its own threads only (raise, abort, glibc's thread cancellation).
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "kill", 1, SCMP_A0(SCMP_CMP_EQ, self));
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "tgkill", 1, SCMP_A0(SCMP_CMP_EQ, self));
    // Its own scheduling and limits (pid 0 is the caller), never another process's.
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "sched_setaffinity", 1, SCMP_A0(SCMP_CMP_EQ, 0));
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "setpriority", 2, SCMP_A0(SCMP_CMP_EQ, PRIO_PROCESS), SCMP_A1(SCMP_CMP_EQ, 0));
    if (status == 0) status = rule(filter, SCMP_ACT_ALLOW, "prlimit64", 1, SCMP_A0(SCMP_CMP_EQ, 0));
    // prctl: naming its threads and mappings, and questions; never its death signal, dumpability
    // or anything else.
    static const scmp_datum_t options[] = {PR_SET_NAME,     PR_GET_NAME,    PR_GET_DUMPABLE,     PR_GET_PDEATHSIG,
                                           PR_CAPBSET_READ, PR_GET_SECCOMP, PR_GET_NO_NEW_PRIVS, 0x53564d41 /* PR_SET_VMA */};
    for (size_t i = 0; i < sizeof options / sizeof options[0] && status == 0; i++)
        status = rule(filter, SCMP_ACT_ALLOW, "prctl", 1, SCMP_A0(SCMP_CMP_EQ, options[i]));
    // ioctl: what isatty and non-blocking reads ask; nothing that changes a file (FS_IOC_SETFLAGS)
    // or a device.
    static const scmp_datum_t requests[] = {TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX};
    for (size_t i = 0; i < sizeof requests / sizeof requests[0] && status == 0; i++)
        status = rule(filter, SCMP_ACT_ALLOW, "ioctl", 1, SCMP_A1(SCMP_CMP_EQ, requests[i]));
    if (status == 0) status = seccomp_load(filter);
    seccomp_release(filter);
    return status < 0 ? -status : status;
#else
    return ENOSYS;
#endif
}

int tf_sandbox_landlock(const int *read_fds, int read_count, const int *write_fds, int write_count, int *abi) {
    *abi = 0;
#if defined(__linux__)
    long version = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (version < 1) return errno == 0 ? ENOSYS : errno;
    *abi = (int) version;
    // ABI 1's rights, then each later ABI's, all handled (so denied unless granted below): 2
    // REFER (moving a file between directories), 3 TRUNCATE, 4 TCP bind and connect, 5 ioctl on
    // devices, 6 signals and abstract sockets outside the sandbox.
    struct tf_ruleset_attr attributes = {0};
    attributes.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                                   LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                                   LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                                   LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                                   LANDLOCK_ACCESS_FS_MAKE_SYM;
    uint64_t writes = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                      LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG;
    size_t size = sizeof attributes.handled_access_fs;
    if (version >= 2) {
        attributes.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
        writes |= LANDLOCK_ACCESS_FS_REFER;
    }
    if (version >= 3) {
        attributes.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
        writes |= LANDLOCK_ACCESS_FS_TRUNCATE;
    }
    if (version >= 4) {
        attributes.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size = offsetof(struct tf_ruleset_attr, scoped);
    }
    if (version >= 5) attributes.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    if (version >= 6) {
        attributes.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        size = sizeof attributes;
    }
    const uint64_t reads = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    int ruleset = (int) syscall(SYS_landlock_create_ruleset, &attributes, size, 0);
    if (ruleset < 0) return errno;
    int status = 0;
    for (int i = 0; i < read_count + write_count && status == 0; i++) {
        struct landlock_path_beneath_attr rule = {
            .allowed_access = i < read_count ? reads : reads | writes,
            .parent_fd = i < read_count ? read_fds[i] : write_fds[i - read_count],
        };
        if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) status = errno;
    }
    if (status == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) status = errno;
    close(ruleset);
    return status;
#else
    (void) read_fds;
    (void) read_count;
    (void) write_fds;
    (void) write_count;
    return ENOSYS;
#endif
}

int tf_send_descriptor(int socket, const void *bytes, size_t count, int fd) {
    struct iovec vector = {.iov_base = (void *) bytes, .iov_len = count};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &fd, sizeof(int));
    ssize_t sent;
    do {
        sent = sendmsg(socket, &message, MSG_NOSIGNAL);
    } while (sent < 0 && errno == EINTR);
    return sent < 0 ? -1 : (int) sent;
}

long tf_receive_with_descriptors(int socket, void *bytes, size_t count, int *fds, int capacity, int *received) {
    struct iovec vector = {.iov_base = bytes, .iov_len = count};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } control;
    struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    *received = 0;
    ssize_t got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
    if (got < 0) return -1;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int n = (int) ((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (*received < capacity)
                fds[(*received)++] = fd;
            else
                close(fd);
        }
    }
    return (long) got;
}
