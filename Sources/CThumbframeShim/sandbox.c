// The decode worker's sandbox (include/tf_sandbox.h).
#define _GNU_SOURCE
#include "tf_sandbox.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/landlock.h>
#include <seccomp.h>
#endif

int tf_sandbox_prepare(int parent) {
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
    // The parent may have died between the spawn and here: then this worker has nothing to do.
    if (getppid() != parent) _exit(0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    return 0;
#else
    (void) parent;
    return ENOSYS;
#endif
}

int tf_sandbox_seccomp(void) {
#ifdef __linux__
    // Denied with EPERM: what lets a process reach the network or other processes, run other
    // programs, change the system or the kernel's view of it. (send and recv stay: the worker's
    // one socket is the build's, made before it started, and no other can be made.) Names the running kernel or
    // libseccomp do not know are skipped.
    // clang-format off: a table, filled line by line
    static const char *const denied[] = {
        "socket",
        "socketpair",
        "connect",
        "bind",
        "listen",
        "accept",
        "accept4",
        "execve",
        "execveat",
        "fork",
        "vfork",
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
        "pidfd_open",
        "pidfd_getfd",
        "kcmp",
        "mount",
        "umount2",
        "pivot_root",
        "chroot",
        "move_mount",
        "open_tree",
        "fsopen",
        "fsmount",
        "fsconfig",
        "fspick",
        "mount_setattr",
        "setns",
        "unshare",
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "init_module",
        "finit_module",
        "delete_module",
        "kexec_load",
        "kexec_file_load",
        "reboot",
        "swapon",
        "swapoff",
        "acct",
        "quotactl",
        "userfaultfd",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "open_by_handle_at",
        "name_to_handle_at",
        "settimeofday",
        "clock_settime",
        "adjtimex",
        "clock_adjtime",
        "sethostname",
        "setdomainname",
        "iopl",
        "ioperm",
        "syslog",
        "uselib",
        "personality",
        "chown",
        "fchown",
        "lchown",
        "fchownat",
        "setuid",
        "setgid",
        "setreuid",
        "setregid",
        "setresuid",
        "setresgid",
        "setgroups",
        "mknod",
        "mknodat",
        "link",
        "linkat",
        "symlink",
        "symlinkat",
    };
    // clang-format on
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (filter == NULL) return ENOMEM;
    // The kernel's own error when it refuses the filter (a container's profile), not
    // libseccomp's ECANCELED.
    int status = seccomp_attr_set(filter, SCMP_FLTATR_API_SYSRAWRC, 1);
    // A binary tree of system-call numbers: every allowed call (most are futex, read, write)
    // passes a few comparisons, not the whole list (libseccomp ≥ 2.5).
    if (status == 0) status = seccomp_attr_set(filter, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    for (size_t i = 0; i < sizeof denied / sizeof denied[0] && status == 0; i++) {
        int number = seccomp_syscall_resolve_name(denied[i]);
        if (number == __NR_SCMP_ERROR) continue;
        status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), number, 0);
    }
    // Threads only: glibc falls back from clone3 (whose flags live in memory a filter cannot
    // read) to clone, whose flags are its first argument.
    int clone3 = seccomp_syscall_resolve_name("clone3");
    if (status == 0 && clone3 != __NR_SCMP_ERROR) status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), clone3, 0);
    if (status == 0)
        status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if (status == 0) status = seccomp_load(filter);
    seccomp_release(filter);
    return status < 0 ? -status : status;
#else
    return ENOSYS;
#endif
}

int tf_sandbox_landlock(const int *read_fds, int read_count, const int *write_fds, int write_count, int *abi) {
    *abi = 0;
#if defined(__linux__) && defined(LANDLOCK_CREATE_RULESET_VERSION)
    long version = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (version < 1) return errno == 0 ? ENOSYS : errno;
    *abi = (int) version;
    // ABI 1's rights; ABI 2 adds REFER (moving a file between directories), ABI 3 TRUNCATE.
    uint64_t handled = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                       LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                       LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                       LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                       LANDLOCK_ACCESS_FS_MAKE_SYM;
    uint64_t writes = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                      LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG;
#ifdef LANDLOCK_ACCESS_FS_REFER
    if (version >= 2) {
        handled |= LANDLOCK_ACCESS_FS_REFER;
        writes |= LANDLOCK_ACCESS_FS_REFER;
    }
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
    if (version >= 3) {
        handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
        writes |= LANDLOCK_ACCESS_FS_TRUNCATE;
    }
#endif
    const uint64_t reads = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    struct landlock_ruleset_attr attributes = {.handled_access_fs = handled};
    int ruleset = (int) syscall(SYS_landlock_create_ruleset, &attributes, sizeof attributes, 0);
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
    return ENOSYS;
#endif
}
