/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_format.c - the live-counters file (stat_format.h): layout, seqlock writer, checking reader.
 */
#include "stat_format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int rdps__stat_layout(uint32_t counter_count, uint32_t reject_count, uint32_t entry_capacity,
                      struct rdps_stat_layout *l)
{
    if (counter_count == 0 || counter_count > RDPS_STAT_MAX_COUNTERS ||
        reject_count > RDPS_STAT_MAX_REJECTS || entry_capacity > RDPS_STAT_MAX_ENTRIES)
        return -1;
    memset(l, 0, sizeof(*l));
    l->counter_count = counter_count;
    l->reject_count = reject_count;
    l->entry_capacity = entry_capacity;
    l->entry_size = RDPS_STAT_ENTRY_FIXED + 8u * counter_count;
    l->names_off = RDPS_STAT_HEADER_SIZE;
    l->helps_off = l->names_off + (uint64_t)counter_count * RDPS_STAT_NAME_SIZE;
    l->kinds_off = l->helps_off + (uint64_t)counter_count * RDPS_STAT_HELP_SIZE;
    l->reject_names_off = l->kinds_off + (uint64_t)counter_count * 8;
    l->ctx_off = l->reject_names_off + (uint64_t)reject_count * RDPS_STAT_NAME_SIZE;
    l->entries_off = l->ctx_off + ((uint64_t)counter_count + reject_count) * 8;
    l->file_size = l->entries_off + (uint64_t)entry_capacity * l->entry_size;
    return l->file_size <= RDPS_STAT_MAX_FILE ? 0 : -1;
}

/* ---- writer ---- */

static void put_str(uint8_t *dst, size_t size, const char *s)
{
    memset(dst, 0, size);
    if (s != NULL) {
        size_t n = strlen(s);
        memcpy(dst, s, n < size ? n : size - 1);
    }
}

/* Aligned 64-bit store a concurrent reader sees whole (it still relies on seq to see all). */
static inline void store_word(uint8_t *base, uint64_t off, uint64_t value)
{
    __atomic_store_n((uint64_t *)(void *)(base + off), value, __ATOMIC_RELAXED);
}

static inline struct rdps_stat_header *writer_header(struct rdps_stat_writer *w)
{
    return (struct rdps_stat_header *)(void *)w->base;
}

void rdps__stat_writer_init(struct rdps_stat_writer *w, void *base,
                            const struct rdps_stat_layout *l, const struct rdps_stat_identity *id)
{
    w->base = base;
    w->layout = *l;
    memset(base, 0, l->file_size);
    struct rdps_stat_header *h = writer_header(w);
    h->layout_version = RDPS_STAT_LAYOUT_VERSION;
    h->header_size = RDPS_STAT_HEADER_SIZE;
    h->file_size = l->file_size;
    h->pid = id->pid;
    h->start_time = id->start_time;
    h->ctx_index = id->ctx_index;
    h->counter_count = l->counter_count;
    h->reject_count = l->reject_count;
    h->entry_capacity = l->entry_capacity;
    h->entry_size = l->entry_size;
    h->names_off = l->names_off;
    h->helps_off = l->helps_off;
    h->kinds_off = l->kinds_off;
    h->reject_names_off = l->reject_names_off;
    h->ctx_off = l->ctx_off;
    h->entries_off = l->entries_off;
    h->create_real_ns = id->create_real_ns;
    put_str((uint8_t *)h->program, sizeof(h->program), id->program);
    put_str((uint8_t *)h->device, sizeof(h->device), id->device);
    for (uint32_t i = 0; i < l->counter_count; i++) {
        put_str(w->base + l->names_off + (uint64_t)i * RDPS_STAT_NAME_SIZE, RDPS_STAT_NAME_SIZE,
                id->counter_names[i]);
        put_str(w->base + l->helps_off + (uint64_t)i * RDPS_STAT_HELP_SIZE, RDPS_STAT_HELP_SIZE,
                id->counter_helps[i]);
        store_word(w->base, l->kinds_off + 8u * i, id->counter_kinds[i]);
    }
    for (uint32_t i = 0; i < l->reject_count; i++)
        put_str(w->base + l->reject_names_off + (uint64_t)i * RDPS_STAT_NAME_SIZE,
                RDPS_STAT_NAME_SIZE, id->reject_names[i]);
    /* The magic last: a reader that opened the file early sees no valid file, never half of one. */
    __atomic_store_n(&h->magic, RDPS_STAT_MAGIC, __ATOMIC_RELEASE);
}

void rdps__stat_write_begin(struct rdps_stat_writer *w)
{
    struct rdps_stat_header *h = writer_header(w);
    __atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELAXED); /* odd: updating */
    __atomic_thread_fence(__ATOMIC_RELEASE); /* the odd seq is visible before any new value */
}

void rdps__stat_write_end(struct rdps_stat_writer *w, uint32_t entry_count,
                          uint64_t entries_dropped, uint64_t mono_ns, uint64_t real_ns)
{
    struct rdps_stat_header *h = writer_header(w);
    store_word(w->base, offsetof(struct rdps_stat_header, updates), h->updates + 1);
    store_word(w->base, offsetof(struct rdps_stat_header, update_mono_ns), mono_ns);
    store_word(w->base, offsetof(struct rdps_stat_header, update_real_ns), real_ns);
    uint32_t pair[2] = {entry_count, 0}; /* entry_count shares its word with reserved1 */
    uint64_t word;
    memcpy(&word, pair, 8);
    store_word(w->base, offsetof(struct rdps_stat_header, entry_count), word);
    store_word(w->base, offsetof(struct rdps_stat_header, entries_dropped), entries_dropped);
    __atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELEASE); /* even: consistent again */
}

void rdps__stat_write_ctx(struct rdps_stat_writer *w, const uint64_t *counters,
                          const uint64_t *rejects)
{
    const struct rdps_stat_layout *l = &w->layout;
    for (uint32_t i = 0; i < l->counter_count; i++)
        store_word(w->base, l->ctx_off + 8u * i, counters[i]);
    for (uint32_t i = 0; i < l->reject_count; i++)
        store_word(w->base, l->ctx_off + 8u * (l->counter_count + i), rejects[i]);
}

/* The entry layout of stat_format.h: 64-bit words where the writer stores them. */
_Static_assert(RDPS_STAT_ENTRY_OFF_KIND == RDPS_STAT_TOPIC_SIZE &&
                   RDPS_STAT_ENTRY_OFF_FLAGS == RDPS_STAT_ENTRY_OFF_KIND + 4 &&
                   RDPS_STAT_ENTRY_OFF_TOPIC_ID == RDPS_STAT_ENTRY_OFF_FLAGS + 4 &&
                   RDPS_STAT_ENTRY_OFF_SESSION_ID == RDPS_STAT_ENTRY_OFF_TOPIC_ID + 8 &&
                   RDPS_STAT_ENTRY_OFF_OWN_MASK == RDPS_STAT_ENTRY_OFF_SESSION_ID + 8 &&
                   RDPS_STAT_ENTRY_OFF_UNICAST == RDPS_STAT_ENTRY_OFF_OWN_MASK + 16 &&
                   RDPS_STAT_ENTRY_OFF_UNICAST_LIST == RDPS_STAT_ENTRY_OFF_UNICAST + 8 &&
                   RDPS_STAT_ENTRY_FIXED ==
                       RDPS_STAT_ENTRY_OFF_UNICAST_LIST + 24 * RDPS_STAT_UNICAST_LISTED,
               "stat entry layout");
_Static_assert(RDPS_STAT_ENTRY_OFF_TOPIC_ID % 8 == 0 && RDPS_STAT_ENTRY_FIXED % 8 == 0,
               "stat entry words are aligned");

void rdps__stat_write_entry(struct rdps_stat_writer *w, uint32_t index, uint32_t kind,
                            uint32_t flags, uint64_t topic_id, uint32_t session_id,
                            const char *topic, const uint64_t own_mask[2], const uint64_t *counters,
                            uint32_t unicast_count, const struct rdps_stat_source *unicast)
{
    const struct rdps_stat_layout *l = &w->layout;
    if (index >= l->entry_capacity)
        return;
    uint64_t off = l->entries_off + (uint64_t)index * l->entry_size;
    uint8_t name[RDPS_STAT_TOPIC_SIZE];
    put_str(name, sizeof(name), topic);
    for (uint32_t i = 0; i < RDPS_STAT_TOPIC_SIZE; i += 8) {
        uint64_t word;
        memcpy(&word, name + i, 8);
        store_word(w->base, off + i, word);
    }
    /* Two u32 per word, in the host's layout of the entry. */
    uint32_t pair[2] = {kind, flags};
    uint64_t word;
    memcpy(&word, pair, 8);
    store_word(w->base, off + RDPS_STAT_ENTRY_OFF_KIND, word);
    store_word(w->base, off + RDPS_STAT_ENTRY_OFF_TOPIC_ID, topic_id);
    pair[0] = session_id;
    pair[1] = 0; /* reserved */
    memcpy(&word, pair, 8);
    store_word(w->base, off + RDPS_STAT_ENTRY_OFF_SESSION_ID, word);
    store_word(w->base, off + RDPS_STAT_ENTRY_OFF_OWN_MASK, own_mask[0]);
    store_word(w->base, off + RDPS_STAT_ENTRY_OFF_OWN_MASK + 8, own_mask[1]);
    pair[0] = unicast_count;
    pair[1] = 0; /* reserved */
    memcpy(&word, pair, 8);
    store_word(w->base, off + RDPS_STAT_ENTRY_OFF_UNICAST, word);
    uint8_t list[24 * RDPS_STAT_UNICAST_LISTED];
    uint32_t listed =
        unicast_count < RDPS_STAT_UNICAST_LISTED ? unicast_count : RDPS_STAT_UNICAST_LISTED;
    memset(list, 0, sizeof(list));
    if (listed > 0)
        memcpy(list, unicast, 24u * listed);
    for (uint32_t i = 0; i < sizeof(list); i += 8) {
        memcpy(&word, list + i, 8);
        store_word(w->base, off + RDPS_STAT_ENTRY_OFF_UNICAST_LIST + i, word);
    }
    for (uint32_t i = 0; i < l->counter_count; i++)
        store_word(w->base, off + RDPS_STAT_ENTRY_FIXED + 8u * i, counters[i]);
}

/* ---- reader ---- */

static int refuse(char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t why_len, const char *fmt, ...)
{
    if (why != NULL && why_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static bool is_name_char(char c, bool upper)
{
    return (c >= '0' && c <= '9') || c == '_' ||
           (upper ? (c >= 'A' && c <= 'Z') : (c >= 'a' && c <= 'z'));
}

/* A NUL-terminated string inside `size` bytes whose characters all follow `rule`. */
enum str_rule { STR_COUNTER_NAME, STR_REJECT_NAME, STR_PRINTABLE };
static bool check_str(const uint8_t *p, size_t size, enum str_rule rule, bool allow_empty)
{
    const uint8_t *nul = memchr(p, 0, size);
    if (nul == NULL || (nul == p && !allow_empty))
        return false;
    for (const uint8_t *c = p; c < nul; c++) {
        bool ok = rule == STR_PRINTABLE ? (*c >= 0x20 && *c < 0x7f)
                                        : is_name_char((char)*c, rule == STR_REJECT_NAME);
        if (!ok)
            return false;
    }
    return true;
}

int rdps__stat_parse(const void *buf, size_t len, struct rdps_stat_view *v, char *why,
                     size_t why_len)
{
    return rdps__stat_parse_prefix(buf, len, len, v, why, why_len);
}

/* The bytes in use of a file with header h: up to its last entry in use (0: not computable). */
static uint64_t used_bytes(const struct rdps_stat_header *h)
{
    if (h->entry_count > h->entry_capacity || h->entries_off > RDPS_STAT_MAX_FILE ||
        h->entry_size > RDPS_STAT_MAX_FILE)
        return 0;
    return h->entries_off + (uint64_t)h->entry_count * h->entry_size;
}

int rdps__stat_parse_prefix(const void *buf, size_t len, size_t file_len, struct rdps_stat_view *v,
                            char *why, size_t why_len)
{
    const uint8_t *b = buf;
    struct rdps_stat_header *h = &v->hdr;
    struct rdps_stat_layout l;

    if (len < RDPS_STAT_HEADER_SIZE)
        return refuse(why, why_len, "truncated: %zu bytes, shorter than the %u-byte header", len,
                      RDPS_STAT_HEADER_SIZE);
    memcpy(h, b, sizeof(*h));
    if (h->magic == __builtin_bswap64(RDPS_STAT_MAGIC))
        return refuse(why, why_len, "written by a host of the other byte order");
    if (h->magic != RDPS_STAT_MAGIC)
        return refuse(why, why_len, "not an rdps stat file (magic 0x%016llx)",
                      (unsigned long long)h->magic);
    if (h->layout_version != RDPS_STAT_LAYOUT_VERSION)
        return refuse(why, why_len, "layout version %u, this reader knows %u", h->layout_version,
                      RDPS_STAT_LAYOUT_VERSION);
    if (h->header_size != RDPS_STAT_HEADER_SIZE)
        return refuse(why, why_len, "header size %u, expected %u", h->header_size,
                      RDPS_STAT_HEADER_SIZE);
    if (len > file_len)
        return refuse(why, why_len, "%zu bytes read of a %zu-byte file", len, file_len);
    if (h->file_size != file_len)
        return refuse(why, why_len, "%s: %zu bytes, the header says %llu",
                      file_len < h->file_size ? "truncated" : "size mismatch", file_len,
                      (unsigned long long)h->file_size);
    if (rdps__stat_layout(h->counter_count, h->reject_count, h->entry_capacity, &l) != 0)
        return refuse(why, why_len, "counts out of range: %u counters, %u reasons, %u entries",
                      h->counter_count, h->reject_count, h->entry_capacity);
    if (l.file_size != h->file_size || l.entry_size != h->entry_size ||
        l.names_off != h->names_off || l.helps_off != h->helps_off || l.kinds_off != h->kinds_off ||
        l.reject_names_off != h->reject_names_off || l.ctx_off != h->ctx_off ||
        l.entries_off != h->entries_off)
        return refuse(why, why_len, "offsets or sizes do not match the counts");
    if (h->seq & 1u)
        return refuse(why, why_len, "caught in the middle of an update");
    if (h->entry_count > h->entry_capacity)
        return refuse(why, why_len, "%u entries in a table of %u", h->entry_count,
                      h->entry_capacity);
    if (len < used_bytes(h))
        return refuse(why, why_len, "truncated: %zu bytes read, the entries in use end at %llu",
                      len, (unsigned long long)used_bytes(h));
    if (h->pid == 0 || h->pid > 0x7fffffffu)
        return refuse(why, why_len, "pid %llu out of range", (unsigned long long)h->pid);
    if (!check_str((const uint8_t *)h->program, sizeof(h->program), STR_PRINTABLE, true) ||
        !check_str((const uint8_t *)h->device, sizeof(h->device), STR_PRINTABLE, true))
        return refuse(why, why_len, "program or device name not a terminated printable string");
    for (uint32_t i = 0; i < l.counter_count; i++) {
        if (!check_str(b + l.names_off + (uint64_t)i * RDPS_STAT_NAME_SIZE, RDPS_STAT_NAME_SIZE,
                       STR_COUNTER_NAME, false))
            return refuse(why, why_len, "counter %u: name is not [a-z0-9_]+", i);
        if (!check_str(b + l.helps_off + (uint64_t)i * RDPS_STAT_HELP_SIZE, RDPS_STAT_HELP_SIZE,
                       STR_PRINTABLE, true))
            return refuse(why, why_len, "counter %u: description is not printable", i);
        uint64_t kind = get_u64(b + l.kinds_off + 8u * i);
        if (kind != RDPS_STAT_COUNTER && kind != RDPS_STAT_GAUGE)
            return refuse(why, why_len, "counter %u: unknown kind %llu", i,
                          (unsigned long long)kind);
    }
    for (uint32_t i = 0; i < l.reject_count; i++)
        if (!check_str(b + l.reject_names_off + (uint64_t)i * RDPS_STAT_NAME_SIZE,
                       RDPS_STAT_NAME_SIZE, STR_REJECT_NAME, false))
            return refuse(why, why_len, "bad-frame reason %u: name is not [A-Z0-9_]+", i);
    v->buf = b;
    for (uint32_t i = 0; i < h->entry_count; i++) {
        struct rdps_stat_entry_view e;
        rdps__stat_entry(v, i, &e);
        if (!check_str(b + l.entries_off + (uint64_t)i * l.entry_size, RDPS_STAT_TOPIC_SIZE,
                       STR_PRINTABLE, false))
            return refuse(why, why_len, "entry %u: topic is not a terminated printable string", i);
        if (e.kind != RDPS_STAT_ENTRY_PUB && e.kind != RDPS_STAT_ENTRY_SUB)
            return refuse(why, why_len, "entry %u: unknown kind %u", i, e.kind);
        if (e.flags & ~(uint32_t)RDPS_STAT_ENTRY_RELIABLE)
            return refuse(why, why_len, "entry %u: unknown flags 0x%x", i, e.flags);
        if (e.kind == RDPS_STAT_ENTRY_SUB && e.unicast_count != 0)
            return refuse(why, why_len, "entry %u: a subscriber with unicast destinations", i);
        for (uint32_t k = 0; k < e.unicast_listed; k++)
            if (e.unicast[k].has_gid > 1 || e.unicast[k].reserved != 0)
                return refuse(why, why_len, "entry %u: unicast destination %u malformed", i, k);
        for (uint32_t bit = l.counter_count; bit < RDPS_STAT_MAX_COUNTERS; bit++)
            if (rdps__stat_entry_owns(&e, bit))
                return refuse(why, why_len, "entry %u: own_mask names counter %u of %u", i, bit,
                              l.counter_count);
    }
    return 0;
}

const char *rdps__stat_counter_name(const struct rdps_stat_view *v, uint32_t i)
{
    return (const char *)v->buf + v->hdr.names_off + (uint64_t)i * RDPS_STAT_NAME_SIZE;
}

const char *rdps__stat_counter_help(const struct rdps_stat_view *v, uint32_t i)
{
    return (const char *)v->buf + v->hdr.helps_off + (uint64_t)i * RDPS_STAT_HELP_SIZE;
}

uint32_t rdps__stat_counter_kind(const struct rdps_stat_view *v, uint32_t i)
{
    return (uint32_t)get_u64(v->buf + v->hdr.kinds_off + 8u * i);
}

const char *rdps__stat_reject_name(const struct rdps_stat_view *v, uint32_t i)
{
    return (const char *)v->buf + v->hdr.reject_names_off + (uint64_t)i * RDPS_STAT_NAME_SIZE;
}

uint64_t rdps__stat_ctx_counter(const struct rdps_stat_view *v, uint32_t i)
{
    return get_u64(v->buf + v->hdr.ctx_off + 8u * i);
}

uint64_t rdps__stat_ctx_reject(const struct rdps_stat_view *v, uint32_t i)
{
    return get_u64(v->buf + v->hdr.ctx_off + 8u * ((uint64_t)v->hdr.counter_count + i));
}

void rdps__stat_entry(const struct rdps_stat_view *v, uint32_t i, struct rdps_stat_entry_view *e)
{
    const uint8_t *p = v->buf + v->hdr.entries_off + (uint64_t)i * v->hdr.entry_size;
    memcpy(e->topic, p, RDPS_STAT_TOPIC_SIZE);
    e->topic[RDPS_STAT_TOPIC_SIZE - 1] = '\0';
    memcpy(&e->kind, p + RDPS_STAT_ENTRY_OFF_KIND, 4);
    memcpy(&e->flags, p + RDPS_STAT_ENTRY_OFF_FLAGS, 4);
    e->topic_id = get_u64(p + RDPS_STAT_ENTRY_OFF_TOPIC_ID);
    memcpy(&e->session_id, p + RDPS_STAT_ENTRY_OFF_SESSION_ID, 4);
    e->own_mask[0] = get_u64(p + RDPS_STAT_ENTRY_OFF_OWN_MASK);
    e->own_mask[1] = get_u64(p + RDPS_STAT_ENTRY_OFF_OWN_MASK + 8);
    memcpy(&e->unicast_count, p + RDPS_STAT_ENTRY_OFF_UNICAST, 4);
    e->unicast_listed =
        e->unicast_count < RDPS_STAT_UNICAST_LISTED ? e->unicast_count : RDPS_STAT_UNICAST_LISTED;
    memset(e->unicast, 0, sizeof(e->unicast));
    memcpy(e->unicast, p + RDPS_STAT_ENTRY_OFF_UNICAST_LIST, 24u * e->unicast_listed);
    e->counters_ = p + RDPS_STAT_ENTRY_FIXED;
}

uint64_t rdps__stat_entry_counter(const struct rdps_stat_entry_view *e, uint32_t i)
{
    return get_u64(e->counters_ + 8u * i);
}

static int read_seq(int fd, uint64_t *seq)
{
    return pread(fd, seq, 8, offsetof(struct rdps_stat_header, seq)) == 8 ? 0 : -1;
}

int rdps__stat_read_fd(int fd, unsigned tries, size_t max_bytes, uint8_t **out, size_t *out_len,
                       size_t *file_len, char *why, size_t why_len)
{
    *out = NULL;
    *out_len = *file_len = 0;
    for (unsigned attempt = 0; attempt < tries; attempt++) {
        off_t end = lseek(fd, 0, SEEK_END);
        if (end < 0)
            return refuse(why, why_len, "cannot size the file: %s", strerror(errno));
        if (end < (off_t)RDPS_STAT_HEADER_SIZE || end > (off_t)RDPS_STAT_MAX_FILE)
            return refuse(why, why_len, "%lld bytes: not a stat file (%u..%u)", (long long)end,
                          RDPS_STAT_HEADER_SIZE, RDPS_STAT_MAX_FILE);
        struct rdps_stat_header h;
        if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
            if (attempt + 1 == tries)
                return refuse(why, why_len, "short read of the header");
            continue;
        }
        if (h.seq & 1u) { /* the writer is in the middle of an update */
            usleep(attempt < 10 ? 0 : 1000);
            continue;
        }
        /* Only the part in use: a file that does not say (or says more than it has) is read
         * whole, for the parser to refuse with its reason. */
        uint64_t need = used_bytes(&h);
        if (need < RDPS_STAT_HEADER_SIZE || need > (uint64_t)end)
            need = (uint64_t)end;
        if (need > max_bytes)
            return refuse(why, why_len, "not read: %llu bytes in use, %zu left to this scan",
                          (unsigned long long)need, max_bytes);
        size_t len = (size_t)need;
        uint8_t *buf = malloc(len);
        if (buf == NULL)
            return refuse(why, why_len, "out of memory for %zu bytes", len);
        uint64_t after, inside;
        size_t got = 0;
        while (got < len) {
            ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (got == len && read_seq(fd, &after) == 0) {
            memcpy(&inside, buf + offsetof(struct rdps_stat_header, seq), 8);
            if (h.seq == after && h.seq == inside) {
                *out = buf;
                *out_len = len;
                *file_len = (size_t)end;
                return 0;
            }
        }
        free(buf);
        if (got != len && attempt + 1 == tries)
            return refuse(why, why_len, "short read (%zu of %zu bytes)", got, len);
        usleep(attempt < 10 ? 0 : 1000); /* the writer finishes an update in microseconds */
    }
    return refuse(why, why_len, "no consistent snapshot in %u tries (writer always updating)",
                  tries);
}

int rdps__stat_proc_start_time(long pid, uint64_t *out)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and ')', so start after the last ')'. */
    char *p = strrchr(text, ')');
    if (p == NULL)
        return -1;
    p++;
    for (int field = 2; field < 21; field++) { /* skip to the space before field 22 */
        p = strchr(p + 1, ' ');
        if (p == NULL)
            return -1;
    }
    char *endp;
    errno = 0;
    unsigned long long v = strtoull(p + 1, &endp, 10);
    if (errno != 0 || endp == p + 1)
        return -1;
    *out = v;
    return 0;
}

int rdps__stat_proc_uids(long pid, uint32_t *euid, uint32_t *fsuid)
{
    char path[64], text[4096];
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    /* "Uid:\treal\teffective\tsaved\tfilesystem" */
    const char *p = strstr(text, "\nUid:");
    unsigned long real, eff, saved, fs;
    if (p == NULL || sscanf(p + 5, "%lu %lu %lu %lu", &real, &eff, &saved, &fs) != 4)
        return -1;
    *euid = (uint32_t)eff;
    *fsuid = (uint32_t)fs;
    return 0;
}

bool rdps__stat_path(char *buf, size_t len, const char *dir, long pid, unsigned ctx_index)
{
    int n = snprintf(buf, len, "%s/rdps-%ld-%u.stat", dir, pid, ctx_index);
    return n > 0 && (size_t)n < len;
}

const char *rdps__stat_dir(void)
{
    const char *dir = getenv("RDPS_STAT_DIR");
    return dir != NULL && dir[0] != '\0' ? dir : RDPS_STAT_DEFAULT_DIR;
}
