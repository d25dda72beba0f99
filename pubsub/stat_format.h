/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_format.h - the live-counters file every ctx publishes for rdps-stat: layout, writer, reader.
 */
#ifndef RDPS_PUBSUB_STAT_FORMAT_H
#define RDPS_PUBSUB_STAT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Model. Each ctx owns one file, <dir>/rdps-<pid>-<n>.stat (dir: $RDPS_STAT_DIR or /dev/shm;
 * n: the ctx's number in its process, or a random number when that name was taken), mapped
 * shared and written only by the ctx's thread from its poll loop, at most every
 * RDPS_STAT_REFRESH_NS. Readers (rdps-stat) never write it. The
 * file is host-local, so every field is in the host's byte order; the magic read back as the
 * wrong value tells a foreign byte order or a foreign file.
 *
 *   offset                 size                       contents
 *   0                      512                        struct rdps_stat_header
 *   names_off              counter_count * 64         counter names, NUL-padded (X-macro order)
 *   helps_off              counter_count * 128        their descriptions (OpenMetrics HELP)
 *   kinds_off              counter_count * 8          RDPS_STAT_COUNTER or RDPS_STAT_GAUGE
 *   reject_names_off       reject_count * 64          bad-frame reasons, NUL-padded
 *   ctx_off                (counter_count + reject_count) * 8
 *                                                     ctx counters, then bad frames by reason
 *   entries_off            entry_capacity * entry_size   one entry per publisher/subscriber
 *   entry:  0 topic[256] NUL-padded | 256 u32 kind | 260 u32 flags | 264 u64 topic_id
 *           | 272 u32 session_id | 276 u32 reserved (0) | 280 u64 own_mask[2]
 *           | 296 u32 unicast_count | 300 u32 reserved (0)
 *           | 304 unicast[RDPS_STAT_UNICAST_LISTED] (24 bytes each: rdps_source's layout)
 *           | 496 u64 counters[counter_count]
 *
 * Layout version 2 widened topic_id to 64 bits (the wire's topic id since frame version 2);
 * version 3 added a publisher's unicast destinations: how many subscribing contexts its topic's
 * datagrams are copied to by unicast (unicast_count), the first RDPS_STAT_UNICAST_LISTED of them
 * listed (the rest zero; subscribers: 0).
 *
 * Everything up to ctx_off is written once, before the file appears under its name (it is
 * created under an unpredictable temporary name, so nobody can take that name first, and renamed;
 * when the final name is taken, by a file another user planted in the shared directory say, the
 * writer takes rdps-<pid>-<random>.stat instead and says so in ctx_index). The rest changes under a
 * seqlock: the writer makes `seq` odd, stores the values as aligned 64-bit words, then makes `seq`
 * even again (release). A reader copies the file, then reads `seq` again: the copy is a consistent
 * snapshot only when both reads give the same even value; otherwise it retries. The writer
 * takes no lock and makes no system call, so a reader can never stall it.
 *
 * An entry's counters are what rdps_pub_counters()/rdps_sub_counters() return for it; own_mask
 * (bit i: counter i) marks those that belong to the endpoint itself, the others being the ctx's.
 * The table holds entry_capacity endpoints: the ones beyond are counted in entries_dropped.
 *
 * Liveness: pid and start_time (field 22 of /proc/PID/stat, clock ticks after boot) name the
 * process; a file whose pid is gone, or now belongs to a process started at another time, is
 * stale (its writer died without removing it). `updates` and update_mono_ns show the writer is
 * still refreshing.
 *
 * Any local user can write a file into /dev/shm, so the reader treats every byte as hostile:
 * rdps__stat_parse() checks sizes, offsets, counts and strings before anything is used and
 * refuses the file with a reason. And any local user can name any pid: rdps-stat believes a
 * file only when its owner is the process's (effective or filesystem uid, or root) and it names
 * the process's start time (stat_scan.c).
 *
 * Privacy and size. A file is created mode 0600 (topic names, program and counters are the
 * owner's business); RDPS_STAT_MODE (octal, e.g. 0640 or 0644) opts into group or world read
 * access, never write. A writer's file is at most a few hundred kB (256 entries); a reader
 * refuses files above RDPS_STAT_MAX_FILE without reading them, and reads only the part in use
 * (the header, names, counters and the entries in use: rdps__stat_read_fd).
 */

#define RDPS_STAT_MAGIC          0x5441545353504452ull /* "RDPSSTAT" read as a little-endian u64 */
#define RDPS_STAT_LAYOUT_VERSION 3u
#define RDPS_STAT_HEADER_SIZE    512u
#define RDPS_STAT_NAME_SIZE      64u
#define RDPS_STAT_HELP_SIZE      128u
#define RDPS_STAT_TOPIC_SIZE     256u
#define RDPS_STAT_ENTRY_FIXED    496u /* entry bytes before its counters */
#define RDPS_STAT_UNICAST_LISTED 8u   /* unicast destinations an entry lists */
/* Offsets inside an entry. */
#define RDPS_STAT_ENTRY_OFF_KIND         256u
#define RDPS_STAT_ENTRY_OFF_FLAGS        260u
#define RDPS_STAT_ENTRY_OFF_TOPIC_ID     264u
#define RDPS_STAT_ENTRY_OFF_SESSION_ID   272u
#define RDPS_STAT_ENTRY_OFF_OWN_MASK     280u
#define RDPS_STAT_ENTRY_OFF_UNICAST      296u
#define RDPS_STAT_ENTRY_OFF_UNICAST_LIST 304u
#define RDPS_STAT_MAX_COUNTERS           128u /* own_mask has 128 bits */
#define RDPS_STAT_MAX_REJECTS            256u
#define RDPS_STAT_MAX_ENTRIES            65536u
#define RDPS_STAT_MAX_FILE               (1024u * 1024) /* a writer makes ~200 kB */
#define RDPS_STAT_REFRESH_NS             100000000ull   /* 100 ms while counters move */
#define RDPS_STAT_IDLE_NS                1000000000ull  /* 1 s heartbeat while they do not */
#define RDPS_STAT_DEFAULT_DIR            "/dev/shm"

enum rdps_stat_counter_kind { RDPS_STAT_COUNTER = 1, RDPS_STAT_GAUGE = 2 };

/* A unicast destination as an entry lists it: the subscribing ctx's QP, as rdps_source (rdps.h)
 * lays it out. */
struct rdps_stat_source {
    uint8_t gid[16];
    uint32_t qpn;
    uint16_t lid;
    uint8_t has_gid;
    uint8_t reserved;
};
_Static_assert(sizeof(struct rdps_stat_source) == 24, "stat source size");
enum rdps_stat_entry_kind { RDPS_STAT_ENTRY_PUB = 1, RDPS_STAT_ENTRY_SUB = 2 };
enum rdps_stat_entry_flags { RDPS_STAT_ENTRY_RELIABLE = 0x1 };

struct rdps_stat_header {
    uint64_t magic;
    uint32_t layout_version;
    uint32_t header_size;
    uint64_t file_size;
    uint64_t pid;
    uint64_t start_time; /* /proc/PID/stat field 22 */
    uint32_t ctx_index;
    uint32_t counter_count;
    uint32_t reject_count;
    uint32_t entry_capacity;
    uint32_t entry_size;
    uint32_t reserved0;
    uint64_t names_off;
    uint64_t helps_off;
    uint64_t kinds_off;
    uint64_t reject_names_off;
    uint64_t ctx_off;
    uint64_t entries_off;
    uint64_t create_real_ns; /* CLOCK_REALTIME at creation */
    char program[32];        /* the process's short name */
    char device[64];         /* the ctx's RDMA device */
    uint8_t reserved2[40];
    /* Under the seqlock from here on. */
    uint64_t seq; /* odd while the writer is updating */
    uint64_t updates;
    uint64_t update_mono_ns; /* CLOCK_MONOTONIC of the last update (host-wide) */
    uint64_t update_real_ns; /* CLOCK_REALTIME of the same update */
    uint32_t entry_count;    /* entries in use, <= entry_capacity */
    uint32_t reserved1;
    uint64_t entries_dropped; /* endpoints that did not fit in the table at the last update */
    uint8_t pad[RDPS_STAT_HEADER_SIZE - 304];
};
_Static_assert(sizeof(struct rdps_stat_header) == RDPS_STAT_HEADER_SIZE, "header size");
_Static_assert(offsetof(struct rdps_stat_header, seq) == 256, "seq offset");
_Static_assert(offsetof(struct rdps_stat_header, entries_dropped) == 296, "header tail");

/* Sizes and offsets, computed from the three counts. */
struct rdps_stat_layout {
    uint32_t counter_count, reject_count, entry_capacity, entry_size;
    uint64_t names_off, helps_off, kinds_off, reject_names_off, ctx_off, entries_off, file_size;
};
/* Fills *l; returns 0, or -1 when a count is above its RDPS_STAT_MAX_* limit. */
int rdps__stat_layout(uint32_t counter_count, uint32_t reject_count, uint32_t entry_capacity,
                      struct rdps_stat_layout *l);

/* What the writer knows once: names, descriptions and kinds of its counters, who it is. */
struct rdps_stat_identity {
    uint64_t pid, start_time, create_real_ns;
    uint32_t ctx_index;
    const char *program, *device;
    const char *const *counter_names;
    const char *const *counter_helps;
    const uint8_t *counter_kinds; /* enum rdps_stat_counter_kind */
    const char *const *reject_names;
};

/* ---- writer (one thread) ---- */
struct rdps_stat_writer {
    uint8_t *base; /* file_size bytes, 8-byte aligned (a mapping) */
    struct rdps_stat_layout layout;
};
/* Writes the static part (everything before ctx_off) and zeroes the rest. */
void rdps__stat_writer_init(struct rdps_stat_writer *w, void *base,
                            const struct rdps_stat_layout *l, const struct rdps_stat_identity *id);
/* Brackets one update: seq odd on begin, even on end (which also stamps the update). */
void rdps__stat_write_begin(struct rdps_stat_writer *w);
void rdps__stat_write_end(struct rdps_stat_writer *w, uint32_t entry_count,
                          uint64_t entries_dropped, uint64_t mono_ns, uint64_t real_ns);
/* Between begin and end: the ctx's counters and bad frames by reason (counter_count and
 * reject_count words). */
void rdps__stat_write_ctx(struct rdps_stat_writer *w, const uint64_t *counters,
                          const uint64_t *rejects);
/* Between begin and end: entry `index` (< entry_capacity); a publisher's unicast destinations:
 * unicast_count of them, the first min(unicast_count, RDPS_STAT_UNICAST_LISTED) in unicast. */
void rdps__stat_write_entry(struct rdps_stat_writer *w, uint32_t index, uint32_t kind,
                            uint32_t flags, uint64_t topic_id, uint32_t session_id,
                            const char *topic, const uint64_t own_mask[2], const uint64_t *counters,
                            uint32_t unicast_count, const struct rdps_stat_source *unicast);

/* ---- reader ---- */
struct rdps_stat_entry_view {
    char topic[RDPS_STAT_TOPIC_SIZE];
    uint32_t kind, flags;
    uint64_t topic_id;
    uint32_t session_id;
    uint64_t own_mask[2];
    uint32_t unicast_count;  /* a publisher's unicast destinations */
    uint32_t unicast_listed; /* of them listed: min(unicast_count, RDPS_STAT_UNICAST_LISTED) */
    struct rdps_stat_source unicast[RDPS_STAT_UNICAST_LISTED];
    const uint8_t *counters_; /* counter_count words; read with rdps__stat_entry_counter */
};

/* A parsed snapshot; the pointers refer into the caller's buffer. */
struct rdps_stat_view {
    struct rdps_stat_header hdr; /* copied out; its strings are NUL-terminated */
    const uint8_t *buf;
};

/*
 * Validates a copy of a file: magic, version, sizes, every offset and count against `len`, the
 * NUL-terminated names, entry kinds and topic strings. Returns 0, or -1 with a one-line reason in
 * why (for the user: "truncated: 100 bytes, the header says 4096").
 */
int rdps__stat_parse(const void *buf, size_t len, struct rdps_stat_view *v, char *why,
                     size_t why_len);
/*
 * The same for the first `len` bytes of a file of file_len bytes (rdps__stat_read_fd's copy): the
 * header must say file_len, and len must hold everything in use (up to the last entry in use).
 */
int rdps__stat_parse_prefix(const void *buf, size_t len, size_t file_len, struct rdps_stat_view *v,
                            char *why, size_t why_len);
/* Accessors of a parsed view (indexes below the header's counts). */
const char *rdps__stat_counter_name(const struct rdps_stat_view *v, uint32_t i);
const char *rdps__stat_counter_help(const struct rdps_stat_view *v, uint32_t i);
uint32_t rdps__stat_counter_kind(const struct rdps_stat_view *v, uint32_t i);
const char *rdps__stat_reject_name(const struct rdps_stat_view *v, uint32_t i);
uint64_t rdps__stat_ctx_counter(const struct rdps_stat_view *v, uint32_t i);
uint64_t rdps__stat_ctx_reject(const struct rdps_stat_view *v, uint32_t i);
void rdps__stat_entry(const struct rdps_stat_view *v, uint32_t i, struct rdps_stat_entry_view *e);
uint64_t rdps__stat_entry_counter(const struct rdps_stat_entry_view *e, uint32_t i);
static inline bool rdps__stat_entry_owns(const struct rdps_stat_entry_view *e, uint32_t i)
{
    return i < RDPS_STAT_MAX_COUNTERS && ((e->own_mask[i / 64] >> (i % 64)) & 1u);
}

/*
 * Reads a consistent snapshot of the part in use of an open file into *buf (malloc'ed, *len
 * bytes; free() it; *file_len: the file's size, for rdps__stat_parse_prefix): reads the header
 * (with `seq`), the file up to its last entry in use, `seq` again, and retries (up to `tries`)
 * while the writer was in the middle of an update. Refuses, before allocating, a file larger
 * than RDPS_STAT_MAX_FILE or whose part in use is above max_bytes. Reads with pread, never a
 * mapping, so a file truncated meanwhile cannot fault the reader. Returns 0, or -1 with a
 * reason in why (the file is then not parsed).
 */
int rdps__stat_read_fd(int fd, unsigned tries, size_t max_bytes, uint8_t **buf, size_t *len,
                       size_t *file_len, char *why, size_t why_len);

/* Start time of process pid (field 22 of /proc/PID/stat); 0 and *out set, or -1 (gone). */
int rdps__stat_proc_start_time(long pid, uint64_t *out);
/* Effective and filesystem uid of process pid (/proc/PID/status); 0, or -1 (gone). */
int rdps__stat_proc_uids(long pid, uint32_t *euid, uint32_t *fsuid);

/* "<dir>/rdps-<pid>-<n>.stat" into buf; false when it does not fit. */
bool rdps__stat_path(char *buf, size_t len, const char *dir, long pid, unsigned ctx_index);
/* The directory: $RDPS_STAT_DIR when set and not empty, else RDPS_STAT_DEFAULT_DIR. */
const char *rdps__stat_dir(void);

#endif /* RDPS_PUBSUB_STAT_FORMAT_H */
