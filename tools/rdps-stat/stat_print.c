/* SPDX-License-Identifier: BSD-2-Clause */
/* stat_print.c - rdps-stat's outputs: the table, one JSON line per sample, OpenMetrics text. */
#include "stat_print.h"

#include <arpa/inet.h>

#include <inttypes.h>
#include <string.h>

#include "tool_json.h"

static const char *kind_name(uint32_t kind)
{
    return kind == RDPS_STAT_ENTRY_PUB ? "pub" : "sub";
}

static bool shown(const struct stat_ctx *c, const struct stat_print_opts *o)
{
    return o->topic == NULL || stat_ctx_has_topic(c, o->topic);
}

/* A unicast destination as text: the IPv4 address of an IPv4-mapped GID (RoCE v2), else the GID
 * in IPv6 notation, or the LID without a GRH; then the QPN. */
static void format_source(const struct rdps_stat_source *src, char *buf, size_t len)
{
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    char addr[INET6_ADDRSTRLEN] = "";
    if (!src->has_gid)
        snprintf(addr, sizeof(addr), "lid %u", src->lid);
    else if (memcmp(src->gid, v4_mapped, 12) == 0)
        inet_ntop(AF_INET, src->gid + 12, addr, sizeof(addr));
    else
        inet_ntop(AF_INET6, src->gid, addr, sizeof(addr));
    snprintf(buf, len, "%s/0x%06" PRIx32, addr, src->qpn);
}

static bool entry_shown(const struct rdps_stat_entry_view *e, const struct stat_print_opts *o)
{
    return o->topic == NULL || strcmp(e->topic, o->topic) == 0;
}

static double age_s(const struct stat_scan *s, const struct stat_ctx *c)
{
    uint64_t t = c->view.hdr.update_mono_ns;
    return t == 0 || t > s->taken_mono_ns ? 0.0 : (double)(s->taken_mono_ns - t) / 1e9;
}

static const char *state_name(enum stat_state st)
{
    return st == STAT_LIVE ? "live" : st == STAT_STALE ? "stale" : "refused";
}

static void count_states(const struct stat_scan *s, const struct stat_print_opts *o, size_t n[3])
{
    n[0] = n[1] = n[2] = 0;
    for (size_t i = 0; i < s->n; i++)
        if (shown(&s->ctx[i], o))
            n[s->ctx[i].state]++;
}

/* ---- table ---- */

static void table_row(FILE *out, const char *name, uint64_t value, const double *rate)
{
    if (rate != NULL)
        fprintf(out, "    %-28s %16" PRIu64 " %14.1f\n", name, value, *rate);
    else
        fprintf(out, "    %-28s %16" PRIu64 "\n", name, value);
}

static void table_ctx(FILE *out, const struct stat_scan *cur, const struct stat_ctx *c,
                      const struct stat_ctx *p, const struct stat_print_opts *o)
{
    const struct rdps_stat_view *v = &c->view;
    const struct rdps_stat_header *h = &v->hdr;
    if (c->state == STAT_REFUSED) {
        fprintf(out, "%s: refused: %s\n\n", c->path, c->why);
        return;
    }
    fprintf(out, "pid %ld ctx %u  %s on %s  ", c->pid, c->index, h->program[0] ? h->program : "?",
            h->device[0] ? h->device : "?");
    if (c->state == STAT_STALE) {
        fprintf(out, "STALE: %s (rdps-stat --clean removes %s)\n\n", c->why, c->path);
        return;
    }
    if (h->updates == 0)
        fprintf(out, "live, not updated yet\n");
    else
        fprintf(out, "live, updated %.2f s ago (update %" PRIu64 ")\n", age_s(cur, c), h->updates);
    fprintf(out, "  %-30s %16s%s\n", "ctx", "value", p != NULL ? "         rate/s" : "");
    for (uint32_t i = 0; i < h->counter_count; i++) {
        uint64_t val = rdps__stat_ctx_counter(v, i);
        if (val == 0 && !o->all)
            continue;
        double r = 0.0;
        if (p != NULL && rdps__stat_counter_kind(v, i) == RDPS_STAT_COUNTER &&
            i < p->view.hdr.counter_count)
            r = stat_rate(val, rdps__stat_ctx_counter(&p->view, i), c, p);
        bool rated = p != NULL && rdps__stat_counter_kind(v, i) == RDPS_STAT_COUNTER;
        table_row(out, rdps__stat_counter_name(v, i), val, rated ? &r : NULL);
    }
    for (uint32_t i = 0; i < h->reject_count; i++) {
        uint64_t val = rdps__stat_ctx_reject(v, i);
        if (val == 0 && !o->all)
            continue;
        char name[80];
        snprintf(name, sizeof(name), "bad_frames[%s]", rdps__stat_reject_name(v, i));
        table_row(out, name, val, NULL);
    }
    for (uint32_t e = 0; e < h->entry_count; e++) {
        struct rdps_stat_entry_view ev, pe;
        rdps__stat_entry(v, e, &ev);
        if (!entry_shown(&ev, o))
            continue;
        int pi = p != NULL ? stat_entry_match(p, &ev) : -1;
        if (pi >= 0)
            rdps__stat_entry(&p->view, (uint32_t)pi, &pe);
        fprintf(out, "  %s %s%s", kind_name(ev.kind), ev.topic,
                ev.flags & RDPS_STAT_ENTRY_RELIABLE ? " (reliable)" : "");
        if (ev.kind == RDPS_STAT_ENTRY_PUB)
            fprintf(out, " session 0x%08" PRIx32, ev.session_id);
        fputc('\n', out);
        if (ev.unicast_count > 0) {
            fprintf(out, "    unicast to %" PRIu32 ":", ev.unicast_count);
            for (uint32_t k = 0; k < ev.unicast_listed; k++) {
                char text[80];
                format_source(&ev.unicast[k], text, sizeof(text));
                fprintf(out, " %s", text);
            }
            if (ev.unicast_count > ev.unicast_listed)
                fprintf(out, " (+%" PRIu32 ")", ev.unicast_count - ev.unicast_listed);
            fputc('\n', out);
        }
        for (uint32_t i = 0; i < h->counter_count; i++) {
            uint64_t val = rdps__stat_entry_counter(&ev, i);
            if (!rdps__stat_entry_owns(&ev, i) || (val == 0 && !o->all))
                continue;
            double r = 0.0;
            bool rated = pi >= 0 && rdps__stat_counter_kind(v, i) == RDPS_STAT_COUNTER;
            if (rated)
                r = stat_rate(val, rdps__stat_entry_counter(&pe, i), c, p);
            table_row(out, rdps__stat_counter_name(v, i), val, rated ? &r : NULL);
        }
    }
    if (h->entries_dropped > 0)
        fprintf(out, "  (%" PRIu64 " more endpoints did not fit in the file)\n",
                h->entries_dropped);
    fputc('\n', out);
}

void stat_print_table(FILE *out, const struct stat_scan *cur, const struct stat_scan *prev,
                      const struct stat_print_opts *o)
{
    size_t n[3];
    count_states(cur, o, n);
    fprintf(out, "%s: %zu rdps context%s (%zu live, %zu stale, %zu refused)\n\n", o->dir,
            n[0] + n[1] + n[2], n[0] + n[1] + n[2] == 1 ? "" : "s", n[0], n[1], n[2]);
    for (size_t i = 0; i < cur->n; i++)
        if (shown(&cur->ctx[i], o))
            table_ctx(out, cur, &cur->ctx[i], stat_scan_match(prev, &cur->ctx[i]), o);
    fflush(out);
}

/* ---- JSON ---- */

static void json_counters(struct tool_json *j, const char *key, const struct rdps_stat_view *v,
                          const struct rdps_stat_entry_view *e)
{
    tool_json_object_begin(j, key);
    for (uint32_t i = 0; i < v->hdr.counter_count; i++) {
        if (e == NULL)
            tool_json_u64(j, rdps__stat_counter_name(v, i), rdps__stat_ctx_counter(v, i));
        else if (rdps__stat_entry_owns(e, i))
            tool_json_u64(j, rdps__stat_counter_name(v, i), rdps__stat_entry_counter(e, i));
    }
    tool_json_object_end(j);
}

/* Rates of counters (not gauges) between two snapshots; e/pe NULL: the ctx's. */
static void json_rates(struct tool_json *j, const struct stat_ctx *c, const struct stat_ctx *p,
                       const struct rdps_stat_entry_view *e, const struct rdps_stat_entry_view *pe)
{
    const struct rdps_stat_view *v = &c->view;
    tool_json_object_begin(j, "rates");
    for (uint32_t i = 0; i < v->hdr.counter_count && i < p->view.hdr.counter_count; i++) {
        if (rdps__stat_counter_kind(v, i) != RDPS_STAT_COUNTER ||
            strcmp(rdps__stat_counter_name(v, i), rdps__stat_counter_name(&p->view, i)) != 0)
            continue;
        if (e == NULL)
            tool_json_double(
                j, rdps__stat_counter_name(v, i),
                stat_rate(rdps__stat_ctx_counter(v, i), rdps__stat_ctx_counter(&p->view, i), c, p));
        else if (rdps__stat_entry_owns(e, i))
            tool_json_double(
                j, rdps__stat_counter_name(v, i),
                stat_rate(rdps__stat_entry_counter(e, i), rdps__stat_entry_counter(pe, i), c, p));
    }
    tool_json_object_end(j);
}

static void json_ctx(struct tool_json *j, const struct stat_scan *cur, const struct stat_ctx *c,
                     const struct stat_ctx *p, const struct stat_print_opts *o)
{
    const struct rdps_stat_view *v = &c->view;
    const struct rdps_stat_header *h = &v->hdr;
    tool_json_object_begin(j, NULL);
    tool_json_str(j, "file", c->path);
    tool_json_i64(j, "pid", c->pid);
    tool_json_u64(j, "ctx", c->index);
    tool_json_str(j, "state", state_name(c->state));
    if (c->state != STAT_LIVE)
        tool_json_str(j, "reason", c->why);
    if (c->state == STAT_REFUSED) {
        tool_json_object_end(j);
        return;
    }
    tool_json_str(j, "program", h->program);
    tool_json_str(j, "device", h->device);
    tool_json_u64(j, "updates", h->updates);
    tool_json_double(j, "age_s", age_s(cur, c));
    tool_json_u64(j, "entries_dropped", h->entries_dropped);
    json_counters(j, "counters", v, NULL);
    if (p != NULL)
        json_rates(j, c, p, NULL, NULL);
    tool_json_object_begin(j, "bad_frames_by_reason");
    for (uint32_t i = 0; i < h->reject_count; i++)
        tool_json_u64(j, rdps__stat_reject_name(v, i), rdps__stat_ctx_reject(v, i));
    tool_json_object_end(j);
    tool_json_array_begin(j, "endpoints");
    for (uint32_t e = 0; e < h->entry_count; e++) {
        struct rdps_stat_entry_view ev, pe;
        rdps__stat_entry(v, e, &ev);
        if (!entry_shown(&ev, o))
            continue;
        tool_json_object_begin(j, NULL);
        tool_json_str(j, "kind", kind_name(ev.kind));
        tool_json_str(j, "topic", ev.topic);
        tool_json_u64(j, "topic_id", ev.topic_id);
        if (ev.kind == RDPS_STAT_ENTRY_PUB) {
            tool_json_u64(j, "session", ev.session_id);
            tool_json_u64(j, "unicast_destinations", ev.unicast_count);
            tool_json_array_begin(j, "unicast");
            for (uint32_t k = 0; k < ev.unicast_listed; k++) {
                char text[80];
                format_source(&ev.unicast[k], text, sizeof(text));
                tool_json_str(j, NULL, text);
            }
            tool_json_array_end(j);
        }
        tool_json_bool(j, "reliable", ev.flags & RDPS_STAT_ENTRY_RELIABLE);
        json_counters(j, "counters", v, &ev);
        int pi = p != NULL ? stat_entry_match(p, &ev) : -1;
        if (pi >= 0) {
            rdps__stat_entry(&p->view, (uint32_t)pi, &pe);
            json_rates(j, c, p, &ev, &pe);
        }
        tool_json_object_end(j);
    }
    tool_json_array_end(j);
    tool_json_object_end(j);
}

void stat_print_json(FILE *out, const struct stat_scan *cur, const struct stat_scan *prev,
                     const struct stat_print_opts *o)
{
    struct tool_json j;
    size_t n[3];
    count_states(cur, o, n);
    tool_json_init(&j, out);
    tool_json_object_begin(&j, NULL);
    tool_json_str(&j, "tool", "rdps-stat");
    tool_json_str(&j, "dir", o->dir);
    tool_json_u64(&j, "live", n[STAT_LIVE]);
    tool_json_u64(&j, "stale", n[STAT_STALE]);
    tool_json_u64(&j, "refused", n[STAT_REFUSED]);
    tool_json_array_begin(&j, "contexts");
    for (size_t i = 0; i < cur->n; i++)
        if (shown(&cur->ctx[i], o))
            json_ctx(&j, cur, &cur->ctx[i], stat_scan_match(prev, &cur->ctx[i]), o);
    tool_json_array_end(&j);
    tool_json_finish(&j);
}

/* ---- OpenMetrics ---- */

/* A label value or HELP text: backslash, double quote and newline escaped. */
static void om_escape(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', out);
        if (*s == '\n')
            fputs("\\n", out);
        else
            fputc(*s, out);
    }
}

static void om_family(FILE *out, const char *name, const char *type, const char *help)
{
    fprintf(out, "# TYPE %s %s\n# HELP %s ", name, type, name);
    om_escape(out, help);
    fputc('\n', out);
}

static void om_ctx_labels(FILE *out, const struct stat_ctx *c)
{
    fprintf(out, "{pid=\"%ld\",ctx=\"%u\",program=\"", c->pid, c->index);
    om_escape(out, c->view.hdr.program);
    fputc('"', out);
}

static bool om_live(const struct stat_ctx *c, const struct stat_print_opts *o)
{
    return c->state == STAT_LIVE && shown(c, o);
}

/* Index of counter `name` in c's file, or -1 (files of other library versions differ). */
static int om_counter_index(const struct stat_ctx *c, const char *name)
{
    for (uint32_t i = 0; i < c->view.hdr.counter_count; i++)
        if (strcmp(rdps__stat_counter_name(&c->view, i), name) == 0)
            return (int)i;
    return -1;
}

/* Whether an earlier live ctx already emitted the family of counter `name`. */
static bool om_seen_before(const struct stat_scan *s, size_t upto, const char *name,
                           const struct stat_print_opts *o)
{
    for (size_t k = 0; k < upto; k++)
        if (om_live(&s->ctx[k], o) && om_counter_index(&s->ctx[k], name) >= 0)
            return true;
    return false;
}

/* The sum, over c's endpoints of `kind` and `topic`, of counter i; false when none owns it. */
static bool om_endpoint_sum(const struct stat_ctx *c, uint32_t kind, const char *topic, uint32_t i,
                            uint64_t *sum)
{
    bool any = false;
    *sum = 0;
    for (uint32_t e = 0; e < c->view.hdr.entry_count; e++) {
        struct rdps_stat_entry_view ev;
        rdps__stat_entry(&c->view, e, &ev);
        if (ev.kind == kind && strcmp(ev.topic, topic) == 0 && rdps__stat_entry_owns(&ev, i)) {
            *sum += rdps__stat_entry_counter(&ev, i);
            any = true;
        }
    }
    return any;
}

/* Is (kind, topic) at entry e the first of its kind and topic in c (one sample per pair)? */
static bool om_first_of_pair(const struct stat_ctx *c, uint32_t e)
{
    struct rdps_stat_entry_view ev, x;
    rdps__stat_entry(&c->view, e, &ev);
    for (uint32_t k = 0; k < e; k++) {
        rdps__stat_entry(&c->view, k, &x);
        if (x.kind == ev.kind && strcmp(x.topic, ev.topic) == 0)
            return false;
    }
    return true;
}

static void om_counter_families(FILE *out, const struct stat_scan *s,
                                const struct stat_print_opts *o, bool endpoint)
{
    for (size_t f = 0; f < s->n; f++) {
        const struct stat_ctx *first = &s->ctx[f];
        if (!om_live(first, o))
            continue;
        for (uint32_t fi = 0; fi < first->view.hdr.counter_count; fi++) {
            const char *name = rdps__stat_counter_name(&first->view, fi);
            if (om_seen_before(s, f, name, o))
                continue;
            bool gauge = rdps__stat_counter_kind(&first->view, fi) == RDPS_STAT_GAUGE;
            const char *suffix = gauge ? "" : "_total";
            bool header = false;
            for (size_t k = f; k < s->n; k++) {
                const struct stat_ctx *c = &s->ctx[k];
                int i = om_live(c, o) ? om_counter_index(c, name) : -1;
                if (i < 0)
                    continue;
                for (uint32_t e = 0; endpoint && e < c->view.hdr.entry_count; e++) {
                    struct rdps_stat_entry_view ev;
                    uint64_t sum;
                    rdps__stat_entry(&c->view, e, &ev);
                    if (!entry_shown(&ev, o) || !om_first_of_pair(c, e) ||
                        !om_endpoint_sum(c, ev.kind, ev.topic, (uint32_t)i, &sum))
                        continue;
                    if (!header) {
                        char fam[128];
                        snprintf(fam, sizeof(fam), "rdps_endpoint_%s", name);
                        om_family(out, fam, gauge ? "gauge" : "counter",
                                  rdps__stat_counter_help(&first->view, fi));
                        header = true;
                    }
                    fprintf(out, "rdps_endpoint_%s%s{pid=\"%ld\",ctx=\"%u\",topic=\"", name, suffix,
                            c->pid, c->index);
                    om_escape(out, ev.topic);
                    fprintf(out, "\",kind=\"%s\"} %" PRIu64 "\n", kind_name(ev.kind), sum);
                }
                if (endpoint)
                    continue;
                if (!header) {
                    char fam[128];
                    snprintf(fam, sizeof(fam), "rdps_%s", name);
                    om_family(out, fam, gauge ? "gauge" : "counter",
                              rdps__stat_counter_help(&first->view, fi));
                    header = true;
                }
                fprintf(out, "rdps_%s%s", name, suffix);
                om_ctx_labels(out, c);
                fprintf(out, "} %" PRIu64 "\n", rdps__stat_ctx_counter(&c->view, (uint32_t)i));
            }
        }
    }
}

void stat_print_openmetrics(FILE *out, const struct stat_scan *s, const struct stat_print_opts *o)
{
    size_t n[3];
    count_states(s, o, n);
    om_counter_families(out, s, o, false);
    om_counter_families(out, s, o, true);
    bool header = false;
    for (size_t k = 0; k < s->n; k++) {
        const struct stat_ctx *c = &s->ctx[k];
        if (!om_live(c, o))
            continue;
        for (uint32_t r = 0; r < c->view.hdr.reject_count; r++) {
            if (!header) {
                om_family(out, "rdps_bad_frames_by_reason", "counter",
                          "malformed datagrams dropped, by reason");
                header = true;
            }
            fprintf(out,
                    "rdps_bad_frames_by_reason_total{pid=\"%ld\",ctx=\"%u\",reason=\"%s\"} "
                    "%" PRIu64 "\n",
                    c->pid, c->index, rdps__stat_reject_name(&c->view, r),
                    rdps__stat_ctx_reject(&c->view, r));
        }
    }
    header = false;
    for (size_t k = 0; k < s->n; k++) {
        const struct stat_ctx *c = &s->ctx[k];
        if (!om_live(c, o))
            continue;
        if (!header) {
            om_family(out, "rdps_stat_updates", "counter",
                      "times the ctx refreshed its live-counters file");
            header = true;
        }
        fprintf(out, "rdps_stat_updates_total");
        om_ctx_labels(out, c);
        fprintf(out, "} %" PRIu64 "\n", c->view.hdr.updates);
    }
    om_family(out, "rdps_stat_files", "gauge", "live-counters files found, by state");
    for (int st = STAT_LIVE; st <= STAT_REFUSED; st++)
        fprintf(out, "rdps_stat_files{state=\"%s\"} %zu\n", state_name((enum stat_state)st), n[st]);
    fputs("# EOF\n", out);
    fflush(out);
}
