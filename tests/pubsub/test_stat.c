/* SPDX-License-Identifier: BSD-2-Clause */
/* test_stat.c - the live-counters file: layout round trip, hostile files, a reader racing the
 * writer, random input, and a real ctx publishing its counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pubsub_test_util.h"
#include "rdps_clock.h"
#include "stat_format.h"

#define NCOUNTERS 5u
#define NREJECTS  3u

static const char *const names[NCOUNTERS] = {"msgs_sent", "bytes_sent", "gaps", "rtt_us", "lost"};
static const char *const helps[NCOUNTERS] = {"messages published", "bytes", "gaps", "rtt (gauge)",
                                             ""};
static const uint8_t kinds[NCOUNTERS] = {RDPS_STAT_COUNTER, RDPS_STAT_COUNTER, RDPS_STAT_COUNTER,
                                         RDPS_STAT_GAUGE, RDPS_STAT_COUNTER};
static const char *const rejects[NREJECTS] = {"OK", "SHORT", "BAD_VERSION"};

static struct rdps_stat_identity test_identity(void)
{
    struct rdps_stat_identity id = {
        .pid = 4242,
        .start_time = 777,
        .create_real_ns = 5,
        .ctx_index = 3,
        .program = "prog name",
        .device = "rxe0",
        .counter_names = names,
        .counter_helps = helps,
        .counter_kinds = kinds,
        .reject_names = rejects,
    };
    return id;
}

/* A file with `entries` capacity, written once with distinct values: counter i of entry e is
 * 1000 * (e + 1) + i, the ctx's 10 + i, bad frames by reason 100 + r. */
static uint8_t *make_file(uint32_t capacity, uint32_t used, size_t *len)
{
    struct rdps_stat_layout l;
    assert_int_equal(rdps__stat_layout(NCOUNTERS, NREJECTS, capacity, &l), 0);
    uint8_t *mem = aligned_alloc(64, (l.file_size + 63) / 64 * 64);
    assert_non_null(mem);
    struct rdps_stat_writer w;
    struct rdps_stat_identity id = test_identity();
    rdps__stat_writer_init(&w, mem, &l, &id);
    uint64_t ctx[NCOUNTERS], rej[NREJECTS], ent[NCOUNTERS];
    for (uint32_t i = 0; i < NCOUNTERS; i++)
        ctx[i] = 10 + i;
    for (uint32_t r = 0; r < NREJECTS; r++)
        rej[r] = 100 + r;
    rdps__stat_write_begin(&w);
    rdps__stat_write_ctx(&w, ctx, rej);
    for (uint32_t e = 0; e < used; e++) {
        for (uint32_t i = 0; i < NCOUNTERS; i++)
            ent[i] = 1000u * (e + 1) + i;
        char topic[32];
        snprintf(topic, sizeof(topic), "topic.%u", e);
        uint64_t own[2] = {e % 2 ? 0x5u : 0x2u, 0};
        /* Publisher e: 3 * e unicast destinations (listed up to 8), QPN 0x300 + k. */
        struct rdps_stat_source ucast[RDPS_STAT_UNICAST_LISTED];
        memset(ucast, 0, sizeof(ucast));
        for (uint32_t k = 0; k < RDPS_STAT_UNICAST_LISTED; k++) {
            ucast[k].has_gid = 1;
            ucast[k].gid[15] = (uint8_t)k;
            ucast[k].qpn = 0x300 + k;
        }
        rdps__stat_write_entry(&w, e, e % 2 ? RDPS_STAT_ENTRY_SUB : RDPS_STAT_ENTRY_PUB,
                               e == 0 ? RDPS_STAT_ENTRY_RELIABLE : 0, 0xF1E2D3C4B5A69700ull + e,
                               0x200 + e, topic, own, ent, e % 2 ? 0 : 3 * e + 1, ucast);
    }
    rdps__stat_write_end(&w, used, 7, 123456789, 987654321);
    *len = l.file_size;
    return mem;
}

static void test_layout_round_trip(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_file(4, 3, &len);
    struct rdps_stat_view v;
    char why[128] = "";
    assert_int_equal(rdps__stat_parse(buf, len, &v, why, sizeof(why)), 0);
    assert_int_equal(v.hdr.pid, 4242);
    assert_int_equal(v.hdr.start_time, 777);
    assert_int_equal(v.hdr.ctx_index, 3);
    assert_string_equal(v.hdr.program, "prog name");
    assert_string_equal(v.hdr.device, "rxe0");
    assert_int_equal(v.hdr.updates, 1);
    assert_int_equal(v.hdr.seq, 2);
    assert_int_equal(v.hdr.update_mono_ns, 123456789);
    assert_int_equal(v.hdr.update_real_ns, 987654321);
    assert_int_equal(v.hdr.entry_count, 3);
    assert_int_equal(v.hdr.entries_dropped, 7);
    for (uint32_t i = 0; i < NCOUNTERS; i++) {
        assert_string_equal(rdps__stat_counter_name(&v, i), names[i]);
        assert_string_equal(rdps__stat_counter_help(&v, i), helps[i]);
        assert_int_equal(rdps__stat_counter_kind(&v, i), kinds[i]);
        assert_int_equal(rdps__stat_ctx_counter(&v, i), 10 + i);
    }
    for (uint32_t r = 0; r < NREJECTS; r++) {
        assert_string_equal(rdps__stat_reject_name(&v, r), rejects[r]);
        assert_int_equal(rdps__stat_ctx_reject(&v, r), 100 + r);
    }
    for (uint32_t e = 0; e < 3; e++) {
        struct rdps_stat_entry_view ev;
        char topic[32];
        snprintf(topic, sizeof(topic), "topic.%u", e);
        rdps__stat_entry(&v, e, &ev);
        assert_string_equal(ev.topic, topic);
        assert_int_equal(ev.kind, e % 2 ? RDPS_STAT_ENTRY_SUB : RDPS_STAT_ENTRY_PUB);
        assert_int_equal(ev.flags, e == 0 ? RDPS_STAT_ENTRY_RELIABLE : 0);
        assert_true(ev.topic_id == 0xF1E2D3C4B5A69700ull + e); /* all 64 bits */
        assert_int_equal(ev.session_id, 0x200 + e);
        uint32_t nucast = e % 2 ? 0 : 3 * e + 1, listed = nucast < 8 ? nucast : 8;
        assert_int_equal(ev.unicast_count, nucast);
        assert_int_equal(ev.unicast_listed, listed);
        for (uint32_t k = 0; k < listed; k++)
            assert_int_equal(ev.unicast[k].qpn, 0x300 + k);
        for (uint32_t i = 0; i < NCOUNTERS; i++) {
            assert_int_equal(rdps__stat_entry_counter(&ev, i), 1000u * (e + 1) + i);
            bool owned = e % 2 ? (i == 0 || i == 2) : i == 1;
            assert_int_equal(rdps__stat_entry_owns(&ev, i), owned);
        }
    }
    free(buf);
}

/* Every way a file can be wrong is refused with its reason, and never read past its end. */
static void expect_refused(const uint8_t *buf, size_t len, const char *reason)
{
    uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees any read past it */
    memcpy(copy, buf, len);
    struct rdps_stat_view v;
    char why[160] = "";
    assert_int_equal(rdps__stat_parse(copy, len, &v, why, sizeof(why)), -1);
    if (strstr(why, reason) == NULL)
        fail_msg("refused with '%s', expected '%s'", why, reason);
    free(copy);
}

#define HDR_FIELD(buf, field) ((buf) + offsetof(struct rdps_stat_header, field))

static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static void test_hostile_files_refused(void **state)
{
    (void)state;
    size_t len;
    uint8_t *good = make_file(4, 2, &len);
    uint8_t *b = malloc(len);
    struct rdps_stat_view v;
    assert_int_equal(rdps__stat_parse(good, len, &v, NULL, 0), 0);
    const uint64_t names_off = v.hdr.names_off, entries_off = v.hdr.entries_off;

    expect_refused(good, 0, "truncated");
    expect_refused(good, 100, "truncated");
    expect_refused(good, len - 1, "truncated");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, magic), 0x1122334455667788ull);
    expect_refused(b, len, "not an rdps stat file");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, magic), __builtin_bswap64(RDPS_STAT_MAGIC));
    expect_refused(b, len, "other byte order");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, layout_version), 1); /* 32-bit topic ids: read as 3, entries shift */
    expect_refused(b, len, "layout version 1, this reader knows 3");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, layout_version), 2); /* no unicast destinations: counters shift */
    expect_refused(b, len, "layout version 2");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, layout_version), 4);
    expect_refused(b, len, "layout version 4");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, header_size), 256);
    expect_refused(b, len, "header size");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, file_size), len * 2); /* says larger than it is */
    expect_refused(b, len, "truncated");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, counter_count), 100000);
    expect_refused(b, len, "counts out of range");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, counter_count), 0);
    expect_refused(b, len, "counts out of range");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, entry_capacity), 0xffffffffu);
    expect_refused(b, len, "counts out of range");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, entry_capacity), 5); /* a consistent-looking count that the size lacks */
    expect_refused(b, len, "offsets or sizes");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, entries_off), 1ull << 40);
    expect_refused(b, len, "offsets or sizes");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, names_off), 8);
    expect_refused(b, len, "offsets or sizes");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, seq), 3);
    expect_refused(b, len, "middle of an update");
    memcpy(b, good, len);
    put32(HDR_FIELD(b, entry_count), 5);
    expect_refused(b, len, "5 entries in a table of 4");
    memcpy(b, good, len);
    put64(HDR_FIELD(b, pid), 0);
    expect_refused(b, len, "pid 0");
    memcpy(b, good, len);
    memset(HDR_FIELD(b, device), 'x', 64); /* no terminating NUL */
    expect_refused(b, len, "device name");
    memcpy(b, good, len);
    memset(b + names_off, 'a', RDPS_STAT_NAME_SIZE);
    expect_refused(b, len, "counter 0: name");
    memcpy(b, good, len);
    b[names_off + RDPS_STAT_NAME_SIZE] = 'A'; /* not a metric name character */
    expect_refused(b, len, "counter 1: name");
    memcpy(b, good, len);
    b[names_off] = '\0';
    expect_refused(b, len, "counter 0: name");
    memcpy(b, good, len);
    put64(b + v.hdr.kinds_off + 8, 9);
    expect_refused(b, len, "unknown kind 9");
    memcpy(b, good, len);
    b[v.hdr.reject_names_off + RDPS_STAT_NAME_SIZE] = 'a';
    expect_refused(b, len, "bad-frame reason 1");
    memcpy(b, good, len);
    b[entries_off + 2] = 0x07; /* control character in a topic */
    expect_refused(b, len, "entry 0: topic");
    memcpy(b, good, len);
    memset(b + entries_off + v.hdr.entry_size, 'x', RDPS_STAT_TOPIC_SIZE);
    expect_refused(b, len, "entry 1: topic");
    memcpy(b, good, len);
    put32(b + entries_off + RDPS_STAT_ENTRY_OFF_KIND, 3);
    expect_refused(b, len, "entry 0: unknown kind 3");
    memcpy(b, good, len);
    put32(b + entries_off + RDPS_STAT_ENTRY_OFF_FLAGS, 0x80);
    expect_refused(b, len, "entry 0: unknown flags");
    memcpy(b, good, len);
    put64(b + entries_off + RDPS_STAT_ENTRY_OFF_OWN_MASK, 1ull << NCOUNTERS);
    expect_refused(b, len, "own_mask names counter 5 of 5");
    memcpy(b, good, len);
    put32(b + entries_off + v.hdr.entry_size + RDPS_STAT_ENTRY_OFF_UNICAST, 2);
    expect_refused(b, len, "entry 1: a subscriber with unicast destinations");
    memcpy(b, good, len);
    b[entries_off + RDPS_STAT_ENTRY_OFF_UNICAST_LIST + 22] = 2; /* has_gid */
    expect_refused(b, len, "entry 0: unicast destination 0 malformed");
    memcpy(b, good, len);
    put32(b + entries_off + 2 * (uint64_t)v.hdr.entry_size + RDPS_STAT_ENTRY_OFF_UNICAST,
          0xffffffffu); /* a count past the list is fine: only 8 are listed */
    char why_ok[160] = "";
    assert_int_equal(rdps__stat_parse(b, len, &v, why_ok, sizeof(why_ok)), 0);
    /* An unused entry's bytes are not looked at. */
    memcpy(b, good, len);
    memset(b + entries_off + 3 * (uint64_t)v.hdr.entry_size, 0xff, v.hdr.entry_size);
    assert_int_equal(rdps__stat_parse(b, len, &v, NULL, 0), 0);
    free(b);
    free(good);
}

/* xorshift64*: the tests' own seeded generator. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

/* Walks everything a parsed view offers (ASan checks each access stays inside the buffer). */
static uint64_t walk_view(const struct rdps_stat_view *v)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < v->hdr.counter_count; i++)
        sum += strlen(rdps__stat_counter_name(v, i)) + strlen(rdps__stat_counter_help(v, i)) +
               rdps__stat_counter_kind(v, i) + rdps__stat_ctx_counter(v, i);
    for (uint32_t r = 0; r < v->hdr.reject_count; r++)
        sum += strlen(rdps__stat_reject_name(v, r)) + rdps__stat_ctx_reject(v, r);
    for (uint32_t e = 0; e < v->hdr.entry_count; e++) {
        struct rdps_stat_entry_view ev;
        rdps__stat_entry(v, e, &ev);
        sum += strlen(ev.topic);
        for (uint32_t i = 0; i < v->hdr.counter_count; i++)
            sum += rdps__stat_entry_counter(&ev, i) + rdps__stat_entry_owns(&ev, i);
    }
    return sum;
}

static void test_random_input_never_crashes(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    size_t len;
    uint8_t *good = make_file(3, 3, &len);
    unsigned accepted = 0, refused = 0;
    /* Random bytes of random length: refused (a random magic almost never matches). */
    for (int iter = 0; iter < 2000; iter++) {
        size_t n = rng_next(&seed) % (len + 64);
        uint8_t *b = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            b[i] = (uint8_t)rng_next(&seed);
        if (n >= 8 && iter % 2) /* half of them get past the magic */
            put64(b, RDPS_STAT_MAGIC);
        struct rdps_stat_view v;
        char why[128];
        if (rdps__stat_parse(b, n, &v, why, sizeof(why)) == 0) {
            walk_view(&v);
            accepted++;
        } else {
            assert_true(why[0] != '\0');
            refused++;
        }
        free(b);
    }
    /* A valid file with 1..8 random bytes changed or a random truncation. */
    uint8_t *b = malloc(len);
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(b, good, len);
        size_t n = len;
        unsigned flips = 1 + (unsigned)(rng_next(&seed) % 8);
        for (unsigned k = 0; k < flips; k++) {
            uint64_t r = rng_next(&seed);
            /* Bias toward the header, where every field matters. */
            size_t at = (r & 1) ? (r >> 8) % RDPS_STAT_HEADER_SIZE : (r >> 8) % len;
            b[at] = (uint8_t)(r >> 40);
        }
        if (rng_next(&seed) % 16 == 0)
            n = rng_next(&seed) % len;
        uint8_t *exact = malloc(n ? n : 1);
        memcpy(exact, b, n);
        struct rdps_stat_view v;
        if (rdps__stat_parse(exact, n, &v, NULL, 0) == 0) {
            walk_view(&v);
            accepted++;
        } else {
            refused++;
        }
        free(exact);
    }
    print_message("random input: %u accepted (changed counters only), %u refused\n", accepted,
                  refused);
    assert_true(refused > 0);
    assert_true(accepted > 0); /* flips in counter values are still valid files */
    free(b);
    free(good);
}

/* ---- a reader racing the writer ---- */

struct race {
    uint8_t *mem;
    struct rdps_stat_layout l;
    volatile int stop;
    uint64_t writes;
};

/* Every value of one update is the same number k, and the topics are k's letter repeated: a
 * reader that mixes two updates sees two different numbers or letters. */
static void *race_writer(void *arg)
{
    struct race *r = arg;
    struct rdps_stat_writer w;
    struct rdps_stat_identity id = test_identity();
    rdps__stat_writer_init(&w, r->mem, &r->l, &id);
    uint64_t vals[NCOUNTERS], rej[NREJECTS], own[2] = {1, 0};
    char topic[200];
    for (uint64_t k = 1; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); k++) {
        for (uint32_t i = 0; i < NCOUNTERS; i++)
            vals[i] = k;
        for (uint32_t i = 0; i < NREJECTS; i++)
            rej[i] = k;
        size_t tlen = 1 + k % (sizeof(topic) - 1);
        memset(topic, 'a' + (int)(k % 26), tlen);
        topic[tlen] = '\0';
        /* From the end of the file to its start: a reader copying forward meets the writer
         * halfway, so without the seqlock it would keep the old front and the new back. */
        rdps__stat_write_begin(&w);
        for (uint32_t e = r->l.entry_capacity; e-- > 0;)
            rdps__stat_write_entry(&w, e, RDPS_STAT_ENTRY_PUB, 0, k, (uint32_t)k, topic, own, vals,
                                   0, NULL);
        rdps__stat_write_ctx(&w, vals, rej);
        rdps__stat_write_end(&w, r->l.entry_capacity, k, k, k);
        __atomic_store_n(&r->writes, k, __ATOMIC_RELAXED);
        if (k % 64 == 0)
            usleep(20); /* a real writer rests 100 ms between updates; this one barely does */
    }
    return NULL;
}

static void check_consistent(const struct rdps_stat_view *v)
{
    uint64_t k = rdps__stat_ctx_counter(v, 0);
    char topic[200];
    size_t tlen = 1 + k % (sizeof(topic) - 1);
    memset(topic, 'a' + (int)(k % 26), tlen);
    topic[tlen] = '\0';
    assert_int_equal(v->hdr.update_mono_ns, k);
    assert_int_equal(v->hdr.entries_dropped, k);
    assert_int_equal(v->hdr.entry_count, v->hdr.entry_capacity);
    for (uint32_t i = 0; i < NCOUNTERS; i++)
        assert_int_equal(rdps__stat_ctx_counter(v, i), k);
    for (uint32_t i = 0; i < NREJECTS; i++)
        assert_int_equal(rdps__stat_ctx_reject(v, i), k);
    for (uint32_t e = 0; e < v->hdr.entry_count; e++) {
        struct rdps_stat_entry_view ev;
        rdps__stat_entry(v, e, &ev);
        bool same = ev.topic_id == k && strcmp(ev.topic, topic) == 0;
        for (uint32_t i = 0; i < NCOUNTERS; i++)
            same = same && rdps__stat_entry_counter(&ev, i) == k;
        if (!same)
            fail_msg("torn snapshot: ctx says update %llu, entry %u has topic id %llu, topic of "
                     "%zu bytes",
                     (unsigned long long)k, e, (unsigned long long)ev.topic_id, strlen(ev.topic));
    }
}

static void test_reader_racing_writer_sees_no_torn_snapshot(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-stat-race-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/rdps-1-0.stat", dir);
    struct race r = {0};
    assert_int_equal(rdps__stat_layout(NCOUNTERS, NREJECTS, 256, &r.l), 0);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)r.l.file_size), 0);
    r.mem = mmap(NULL, r.l.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(r.mem != MAP_FAILED);
    pthread_t writer;
    assert_int_equal(pthread_create(&writer, NULL, race_writer, &r), 0);
    while (__atomic_load_n(&r.writes, __ATOMIC_RELAXED) == 0)
        usleep(100);

    unsigned snapshots = 0, busy = 0;
    uint64_t first = 0, last = 0;
    /* 1.5 s of reading (a broken reader is caught within a few hundred snapshots), and on until
     * 20 snapshots of a moving writer were read: beside other work (under ASan, load 4) a reader
     * gave up on 59 of 63 reads in 1.5 s. At most 60 s. */
    uint64_t start = rdps__clock_monotonic_ns(), now = start;
    while (now - start < 1500000000ull ||
           ((snapshots < 20 || last == first) && now - start < 60000000000ull)) {
        now = rdps__clock_monotonic_ns();
        uint8_t *buf;
        size_t len, file_len;
        char why[128];
        if (rdps__stat_read_fd(fd, 30, SIZE_MAX, &buf, &len, &file_len, why, sizeof(why)) != 0) {
            busy++; /* the writer never rests: a reader may be refused, never fooled */
            continue;
        }
        struct rdps_stat_view v;
        if (rdps__stat_parse_prefix(buf, len, file_len, &v, why, sizeof(why)) != 0)
            fail_msg("a consistent snapshot did not parse: %s", why);
        check_consistent(&v);
        uint64_t k = rdps__stat_ctx_counter(&v, 0);
        assert_true(k >= last); /* snapshots never go back in time */
        if (first == 0)
            first = k;
        last = k;
        snapshots++;
        free(buf);
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
    pthread_join(writer, NULL);
    print_message("race: %u consistent snapshots (values %llu..%llu), %u reads gave up, %llu "
                  "updates\n",
                  snapshots, (unsigned long long)first, (unsigned long long)last, busy,
                  (unsigned long long)r.writes);
    assert_true(snapshots >= 20);
    assert_true(last > first); /* the reader really raced a moving writer */
    munmap(r.mem, r.l.file_size);
    close(fd);
    unlink(path);
    rmdir(dir);
}

/* ---- a real ctx ---- */

static uint64_t fake_now;
static uint64_t fake_clock(void *user)
{
    (void)user;
    return fake_now;
}

static unsigned delivered;
static void count_message(void *user, const void *data, size_t len, const rdps_msg_info *info)
{
    (void)user;
    (void)data;
    (void)len;
    (void)info;
    delivered++;
}

/* Reads every stat file in dir; returns how many, filling views[] (buffers in bufs[]). */
static int read_dir(const char *dir, struct rdps_stat_view *views, uint8_t **bufs, int max)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "rdps-", 5) != 0)
            continue;
        assert_true(n < max);
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        size_t len, file_len;
        char why[128];
        assert_int_equal(
            rdps__stat_read_fd(fd, 10, SIZE_MAX, &bufs[n], &len, &file_len, why, sizeof(why)), 0);
        close(fd);
        if (rdps__stat_parse_prefix(bufs[n], len, file_len, &views[n], why, sizeof(why)) != 0)
            fail_msg("%s: %s", path, why);
        n++;
    }
    closedir(d);
    return n;
}

static uint32_t counter_index(const char *name)
{
    for (size_t i = 0; i < rdps_counter_count(); i++)
        if (strcmp(rdps_counter_name(i), name) == 0)
            return (uint32_t)i;
    fail_msg("no counter %s", name);
    return 0;
}

static void test_ctx_publishes_its_counters(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-stat-ctx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("RDPS_STAT_DIR", dir, 1);
    struct test_pair p;
    assert_int_equal(test_pair_open(&p, NULL, 0), 0);
    fake_now = 1000000000ull;
    rdps__ctx_set_clock(p.a, fake_clock, NULL);
    rdps__ctx_set_clock(p.b, fake_clock, NULL);
    rdps__stat_shm_open(rdps__ctx_of_handle(p.a));
    rdps__stat_shm_open(rdps__ctx_of_handle(p.b));
    assert_non_null(rdps__ctx_of_handle(p.a)->stat);
    assert_non_null(rdps__ctx_of_handle(p.b)->stat);

    rdps_sub_t *sub;
    rdps_pub_t *pub;
    delivered = 0;
    assert_int_equal(rdps_sub_create(p.b, "stat.topic", count_message, NULL, NULL, &sub), 0);
    assert_int_equal(rdps_pub_create(p.a, "stat.topic", NULL, &pub), 0);
    for (int i = 0; i < 50 && !(rdps_pub_ready(pub) && rdps_sub_ready(sub)); i++)
        TEST_PAIR_PUMP(&p, 1);
    uint8_t msg[100] = {1};
    for (int i = 0; i < 10; i++)
        TEST_PAIR_SEND_OK(&p, pub, msg, sizeof(msg));
    TEST_PAIR_PUMP(&p, 5);
    assert_int_equal(delivered, 10);
    fake_now += RDPS_STAT_REFRESH_NS; /* the refresh is due */
    TEST_PAIR_PUMP(&p, 1);

    struct rdps_stat_view v[4];
    uint8_t *bufs[4];
    assert_int_equal(read_dir(dir, v, bufs, 4), 2);
    uint32_t sent = counter_index("msgs_sent"), got = counter_index("msgs_delivered");
    uint32_t bytes = counter_index("bytes_sent"), bad = counter_index("bad_frames");
    uint64_t start_time;
    assert_int_equal(rdps__stat_proc_start_time((long)getpid(), &start_time), 0);
    int seen_pub = 0, seen_sub = 0;
    for (int f = 0; f < 2; f++) {
        assert_int_equal(v[f].hdr.pid, (uint64_t)getpid());
        assert_int_equal(v[f].hdr.start_time, start_time);
        assert_int_equal(v[f].hdr.counter_count, rdps_counter_count());
        for (uint32_t i = 0; i < v[f].hdr.counter_count; i++)
            assert_string_equal(rdps__stat_counter_name(&v[f], i), rdps_counter_name(i));
        assert_int_equal(v[f].hdr.entry_count, 1);
        struct rdps_stat_entry_view e;
        rdps__stat_entry(&v[f], 0, &e);
        assert_string_equal(e.topic, "stat.topic");
        assert_int_equal(e.topic_id, rdps_topic_id("stat.topic"));
        assert_false(rdps__stat_entry_owns(&e, bad)); /* the ctx's, not the endpoint's */
        if (e.kind == RDPS_STAT_ENTRY_PUB) {
            seen_pub++;
            assert_int_equal(rdps__stat_ctx_counter(&v[f], sent), 10);
            assert_int_equal(rdps__stat_entry_counter(&e, sent), 10);
            assert_int_equal(rdps__stat_entry_counter(&e, bytes), 1000);
            assert_true(rdps__stat_entry_owns(&e, sent));
            assert_int_equal(e.session_id, rdps_pub_session(pub));
        } else {
            seen_sub++;
            assert_int_equal(rdps__stat_ctx_counter(&v[f], got), 10);
            assert_int_equal(rdps__stat_entry_counter(&e, got), 10);
            assert_true(rdps__stat_entry_owns(&e, got));
            assert_false(rdps__stat_entry_owns(&e, sent));
        }
        free(bufs[f]);
    }
    assert_int_equal(seen_pub, 1);
    assert_int_equal(seen_sub, 1);

    /* Moving counters refresh every 100 ms, idle ones every second. The publisher's tail
     * heartbeats (1 ms to 10.4 s after its last datagram) move counters: let them end, and a
     * refresh see it, first. */
    for (int i = 0; i < 60; i++) {
        fake_now += 200000000ull;
        TEST_PAIR_PUMP(&p, 1);
    }
    fake_now += RDPS_STAT_IDLE_NS;
    TEST_PAIR_PUMP(&p, 1);
    uint64_t next = rdps__stat_shm_refresh(rdps__ctx_of_handle(p.a), fake_now);
    assert_int_equal(next, fake_now + RDPS_STAT_IDLE_NS);
    TEST_PAIR_SEND_OK(&p, pub, msg, sizeof(msg));
    next = rdps__stat_shm_refresh(rdps__ctx_of_handle(p.a), fake_now);
    assert_int_equal(next, fake_now + RDPS_STAT_REFRESH_NS);

    rdps_pub_destroy(pub);
    rdps_sub_destroy(sub);
    test_pair_close(&p);
    assert_int_equal(read_dir(dir, v, bufs, 4), 0); /* destroy removed both files */
    unsetenv("RDPS_STAT_DIR");
    rmdir(dir);
}

static void test_opt_out(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-stat-off-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("RDPS_STAT_DIR", dir, 1);
    struct test_pair p;
    rdps_config off;
    rdps_config_init(&off);
    off.stats_off = 1;
    assert_int_equal(test_pair_open(&p, &off, 0), 0);
    rdps__stat_shm_open(rdps__ctx_of_handle(p.b)); /* stats_off */
    assert_null(rdps__ctx_of_handle(p.b)->stat);
    setenv("RDPS_STAT", "0", 1);
    rdps__stat_shm_open(
        rdps__ctx_of_handle(p.a)); /* the environment turns it off for the process */
    assert_null(rdps__ctx_of_handle(p.a)->stat);
    unsetenv("RDPS_STAT");
    setenv("RDPS_STAT_DIR", "/nonexistent/rdps", 1);
    rdps__stat_shm_open(rdps__ctx_of_handle(p.a)); /* cannot be created: the ctx goes on without */
    assert_null(rdps__ctx_of_handle(p.a)->stat);
    TEST_PAIR_PUMP(&p, 2);
    test_pair_close(&p);
    unsetenv("RDPS_STAT_DIR");
    assert_int_equal(rmdir(dir), 0); /* nothing was left in it */
}

/* The mode of the stats file a new ctx creates in dir (umask 022, as most shells). */
static mode_t created_mode(const char *dir)
{
    mode_t old_mask = umask(022);
    struct test_pair p;
    assert_int_equal(test_pair_open(&p, NULL, 0), 0);
    rdps__stat_shm_open(rdps__ctx_of_handle(p.a));
    assert_non_null(rdps__ctx_of_handle(p.a)->stat);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    mode_t mode = 0;
    int files = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        char path[512];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        assert_int_equal(stat(path, &st), 0);
        mode = st.st_mode & 07777;
        files++;
    }
    closedir(d);
    assert_int_equal(files, 1);
    test_pair_close(&p);
    umask(old_mask);
    return mode;
}

/* Finding 15: stats files are the owner's alone unless RDPS_STAT_MODE gives group or world read
 * access (never write, execute or special bits; a bad value keeps 0600). */
static void test_file_mode(void **state)
{
    (void)state;
    char dir[] = "/tmp/rdps-stat-mode-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("RDPS_STAT_DIR", dir, 1);
    unsetenv("RDPS_STAT_MODE");
    assert_int_equal(created_mode(dir), 0600);
    const struct {
        const char *env;
        mode_t mode;
    } cases[] = {{"0640", 0640}, {"644", 0644}, {"0666", 0644}, {"4755", 0644},
                 {"0600", 0600}, {"", 0600},    {"rw-r", 0600}, {"99", 0600}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setenv("RDPS_STAT_MODE", cases[i].env, 1);
        mode_t got = created_mode(dir);
        if (got != cases[i].mode)
            fail_msg("RDPS_STAT_MODE=%s: mode %04o, expected %04o", cases[i].env, (unsigned)got,
                     (unsigned)cases[i].mode);
    }
    unsetenv("RDPS_STAT_MODE");
    unsetenv("RDPS_STAT_DIR");
    assert_int_equal(rmdir(dir), 0); /* every file went with its ctx, no temporary left */
}

static void test_proc_start_time(void **state)
{
    (void)state;
    uint64_t t1, t2;
    assert_int_equal(rdps__stat_proc_start_time((long)getpid(), &t1), 0);
    assert_int_equal(rdps__stat_proc_start_time(1, &t2), 0);
    assert_true(t1 >= t2); /* we started after init */
    assert_int_equal(rdps__stat_proc_start_time(0x7ffffff0L, &t2), -1);
    uint32_t euid, fsuid;
    assert_int_equal(rdps__stat_proc_uids((long)getpid(), &euid, &fsuid), 0);
    assert_int_equal(euid, geteuid());
    assert_int_equal(fsuid, geteuid());
    assert_int_equal(rdps__stat_proc_uids(0x7ffffff0L, &euid, &fsuid), -1);
    char path[64];
    assert_true(rdps__stat_path(path, sizeof(path), "/dev/shm", 12, 3));
    assert_string_equal(path, "/dev/shm/rdps-12-3.stat");
    assert_false(rdps__stat_path(path, 10, "/dev/shm", 12, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_round_trip),
        cmocka_unit_test(test_hostile_files_refused),
        cmocka_unit_test(test_random_input_never_crashes),
        cmocka_unit_test(test_reader_racing_writer_sees_no_torn_snapshot),
        cmocka_unit_test(test_ctx_publishes_its_counters),
        cmocka_unit_test(test_opt_out),
        cmocka_unit_test(test_file_mode),
        cmocka_unit_test(test_proc_start_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
