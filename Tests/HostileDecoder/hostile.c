// A decoder running an attacker's code, for Tests/ThumbframeCoreTests/HostileDecoderTests.swift: a
// library the tests compile and preload into the thumbframe build and its decode workers. In a
// worker, libvips' vips_image_new_from_buffer (the first decoder call of every JPEG, made after
// the sandbox is in place) does what HOSTILE_ACTION names instead of decoding, as code planted by
// a decoder bug would. The build itself is left alone. Each worker writes its pid into
// HOSTILE_DIR as it starts (before its sandbox), so the test can see that none outlives the build.
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int is_worker(void) {
    char line[512] = {0};
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got = read(fd, line, sizeof line - 1);
    close(fd);
    for (ssize_t i = 0; i + 15 < got; i++)
        if (memcmp(line + i, "__decode-worker", 15) == 0) return 1;
    return 0;
}

// Whether this process is a worker, known as it starts: its sandbox hides /proc/self later.
static int worker;

__attribute__((constructor)) static void record(void) {
    worker = is_worker();
    const char *folder = getenv("HOSTILE_DIR");
    if (!folder || !worker) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/worker.%d", folder, (int) getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
}

// The worker's framing: a 4-byte big-endian length, then the body.
static void send_message(const unsigned char *body, uint32_t length) {
    unsigned char header[4] = {length >> 24, length >> 16 & 0xFF, length >> 8 & 0xFF, length & 0xFF};
    send(3, header, 4, MSG_NOSIGNAL);
    send(3, body, length, MSG_NOSIGNAL);
}

static size_t put_int(unsigned char *at, int64_t value) {
    for (int i = 0; i < 8; i++)
        at[i] = (unsigned char) ((uint64_t) value >> (8 * i));
    return 8;
}

// A `done` message: [outputUnwritable], no note, then a failure's JSON or an item's JSON.
static void send_done(const char *unwritable, int item, const char *json, size_t json_length) {
    size_t capacity = json_length + 1024 + (unwritable ? strlen(unwritable) : 0);
    unsigned char *body = calloc(1, capacity);
    size_t n = 0;
    body[n++] = 1;
    body[n++] = unwritable != NULL;
    if (unwritable) {
        n += put_int(body + n, (int64_t) strlen(unwritable));
        memcpy(body + n, unwritable, strlen(unwritable));
        n += strlen(unwritable);
    }
    body[n++] = 0; // no note
    body[n++] = 0; // no motion
    body[n++] = (unsigned char) item;
    n += put_int(body + n, (int64_t) json_length);
    memcpy(body + n, json, json_length);
    n += json_length;
    send_message(body, (uint32_t) n);
    free(body);
}

static const char forged_item[] =
    "{\"file\":{\"bytes\":1,\"modified\":\"2020-01-01T00:00:00.000000000Z\",\"sha256\":"
    "\"0000000000000000000000000000000000000000000000000000000000000000\"},\"image\":{\"format\":\"jpeg\",\"width\":"
    "9223372036854775807,\"height\":1,\"storedWidth\":1,\"storedHeight\":1,\"orientation\":99,\"hasAlpha\":false},"
    "\"thumbnails\":{\"grid\":{\"path\":\"../../../../etc/passwd\",\"width\":1,\"height\":1}},\"placeholder\":{\"thumbhash\":"
    "\"AAAA\",\"color\":\"red;background:url(https://evil.example/x)\"}}";

static const char forged_failure[] = "{\"path\":\"../../etc/shadow\",\"stage\":\"decode\",\"reason\":\"forged\",\"bytes\":1,\"modified\":"
                                     "\"2020-01-01T00:00:00.000000000Z\"}";

// Held by the thread that starts the others, which wait for it (a futex, as decoders' threads wait).
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void *idle(void *unused) {
    (void) unused;
    pthread_mutex_lock(&held);
    return NULL;
}

// Starts threads (small stacks, so memory is not what stops them) until one is refused or 20 000
// run, and says, as the job's failure, which user the worker runs as, the thread limit it runs
// under and how many it started (exhausting the system's threads would starve every process).
static void threads(void) {
    struct rlimit limit;
    getrlimit(RLIMIT_NPROC, &limit);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    int started = 0;
    pthread_mutex_lock(&held);
    for (pthread_t thread; started < 20000 && pthread_create(&thread, &attributes, idle, NULL) == 0;)
        started++;
    char json[256];
    int length = snprintf(json, sizeof json,
                          "{\"path\":\"a.jpg\",\"stage\":\"decode\",\"reason\":\"uid %d threads %lld started %d\",\"bytes\":1,"
                          "\"modified\":\"2020-01-01T00:00:00.000000000Z\"}",
                          (int) getuid(), (long long) limit.rlim_cur, started);
    send_done(NULL, 0, json, (size_t) length);
    _exit(0);
}

static void attack(const char *action, const char *victim) {
    pid_t parent = getppid();
    if (strcmp(action, "chmod") == 0)
        chmod(victim, 0);
    else if (strcmp(action, "fchmod") == 0) {
        for (int fd = 0; fd < 64; fd++)
            fchmod(fd, 0);
    } else if (strcmp(action, "chown") == 0)
        chown(victim, 12345, 12345);
    else if (strcmp(action, "truncate") == 0)
        truncate(victim, 0);
    else if (strcmp(action, "setxattr") == 0) {
        static const unsigned char capability[20] = {0x01, 0x00, 0x00, 0x02, 0x80};
        setxattr(victim, "security.capability", capability, sizeof capability, 0);
        setxattr(victim, "user.planted", "x", 1, 0);
    } else if (strcmp(action, "utimes") == 0)
        utimensat(AT_FDCWD, victim, NULL, 0);
    else if (strcmp(action, "kill-build") == 0)
        kill(parent, SIGKILL);
    else if (strcmp(action, "kill-other") == 0)
        kill(atoi(getenv("HOSTILE_SENTINEL")), SIGSTOP);
    else if (strcmp(action, "kill-group") == 0)
        kill(0, SIGSTOP);
    else if (strcmp(action, "prlimit") == 0) {
        struct rlimit none = {0, 0};
        prlimit(parent, RLIMIT_NOFILE, &none, NULL);
    } else if (strcmp(action, "setpriority") == 0)
        setpriority(PRIO_PROCESS, (id_t) parent, 19);
    else if (strcmp(action, "affinity") == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        sched_setaffinity(parent, sizeof one, &one);
    } else if (strcmp(action, "fanotify") == 0)
        fanotify_init(FAN_CLASS_CONTENT, O_RDONLY);
    else if (strcmp(action, "inotify") == 0)
        inotify_init1(0);
    else if (strcmp(action, "socket") == 0)
        socket(AF_INET, SOCK_STREAM, 0);
    else if (strcmp(action, "threads") == 0)
        threads();
    else if (strcmp(action, "sysv") == 0)
        shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600);
    else if (strcmp(action, "mqueue") == 0)
        mq_open("/thumbframe-hostile", O_CREAT | O_RDWR, 0600, NULL);
    else if (strcmp(action, "shared-memory") == 0) {
        char *memory = mmap(NULL, 900 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (memory != MAP_FAILED) memset(memory, 1, 900 << 20);
    } else if (strcmp(action, "outlive") == 0) {
        prctl(PR_SET_PDEATHSIG, 0);
        setsid();
    } else if (strcmp(action, "hang") == 0) {
        for (;;)
            pause();
    } else if (strcmp(action, "forge-item") == 0) {
        send_done(NULL, 1, forged_item, sizeof forged_item - 1);
        for (;;)
            pause();
    } else if (strcmp(action, "forge-failure") == 0) {
        send_done(NULL, 0, forged_failure, sizeof forged_failure - 1);
        for (;;)
            pause();
    } else if (strcmp(action, "forge-unwritable") == 0) {
        send_done("No space left on device", 0, forged_failure, sizeof forged_failure - 1);
        for (;;)
            pause();
    } else if (strcmp(action, "forge-nested") == 0) {
        size_t depth = 200000;
        char *json = malloc(2 * depth);
        memset(json, '[', depth);
        memset(json + depth, ']', depth);
        send_done(NULL, 1, json, 2 * depth);
        for (;;)
            pause();
    } else if (strcmp(action, "forge-huge") == 0) {
        size_t size = 15 << 20;
        char *json = malloc(size);
        memset(json, ' ', size);
        send_done(NULL, 1, json, size);
        for (;;)
            pause();
    } else if (strcmp(action, "forge-rendering") == 0) {
        static const unsigned char rendering[] = {3};
        for (;;) {
            send_message(rendering, 1);
            usleep(10000);
        }
    }
}

struct _VipsImage;
struct _VipsImage *vips_image_new_from_buffer(const void *data, size_t length, const char *options, ...) {
    (void) data;
    (void) length;
    (void) options;
    const char *action = getenv("HOSTILE_ACTION");
    if (action && worker) attack(action, getenv("HOSTILE_VICTIM"));
    // No picture: the file fails to decode if the worker is still alive.
    return NULL;
}
