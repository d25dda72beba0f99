/* SPDX-License-Identifier: BSD-2-Clause */
/* md_packet.c - MoldUDP64-style packer (size and delay flushing, per-channel sequence) and the
 * validating unpacker. */
#include "md_packet.h"

#include <errno.h>
#include <string.h>

#include "md_endian.h"

_Static_assert(MD_HEADER_LEN == MD_SESSION_LEN + 8 + 2, "MoldUDP64 header: session, seq, count");
_Static_assert(MD_PACKET_MAX <= 0xFFFF, "message counts and lengths are 16-bit");

/* ---- packer ---- */

static uint32_t header_len(bool times)
{
    return MD_HEADER_LEN + (times ? MD_TIMES_LEN : 0);
}

/* Bytes one more message of len takes: its block, and its delta in the trailer. */
static uint32_t block_cost(const struct md_packer *p, size_t len)
{
    return (uint32_t)(2 + len + (p->cfg.intended_times ? MD_DELTA_LEN : 0));
}

/* The packet's size once flushed: what is written plus the trailer still to write. */
static uint32_t packet_size(const struct md_packer *p)
{
    return p->used + (p->cfg.intended_times ? p->count * MD_DELTA_LEN : 0);
}

static void write_header(struct md_packer *p, uint64_t seq, uint16_t count, uint64_t base_ns)
{
    memcpy(p->buf, p->cfg.session, MD_SESSION_LEN);
    md_put_be64(p->buf + MD_SESSION_LEN, seq);
    md_put_be16(p->buf + MD_SESSION_LEN + 8, count);
    if (p->cfg.intended_times)
        md_put_be64(p->buf + MD_HEADER_LEN, base_ns);
}

int md_packer_init(struct md_packer *p, const struct md_packer_config *cfg)
{
    memset(p, 0, sizeof(*p));
    if (cfg->max_datagram < MD_PACKET_MIN || cfg->max_datagram > MD_PACKET_MAX ||
        cfg->max_msg_len == 0 || cfg->max_delay_ns == 0)
        return -EINVAL;
    p->cfg = *cfg;
    if (block_cost(p, cfg->max_msg_len) > cfg->max_datagram - header_len(cfg->intended_times))
        return -EINVAL; /* a longest message would never fit */
    p->next_seq = cfg->first_seq;
    p->used = header_len(cfg->intended_times);
    return 0;
}

int md_packer_add(struct md_packer *p, const void *msg, size_t len, uint64_t intended_ns,
                  uint64_t now_ns)
{
    if (p->ended)
        return -EPIPE;
    if (len == 0 || len > p->cfg.max_msg_len) {
        p->counters.bad_length++;
        return -EINVAL;
    }
    if (packet_size(p) + block_cost(p, len) > p->cfg.max_datagram ||
        (p->cfg.intended_times && p->count > 0 &&
         (intended_ns < p->base_ns || intended_ns - p->base_ns > UINT32_MAX))) {
        p->counters.full_no_room++;
        return -ENOSPC;
    }
    if (p->count == 0) {
        p->packet_seq = p->next_seq;
        p->first_added_ns = now_ns;
        p->base_ns = intended_ns;
    }
    md_put_be16(p->buf + p->used, (uint16_t)len);
    memcpy(p->buf + p->used + 2, msg, len);
    p->used += (uint32_t)(2 + len);
    p->deltas[p->count++] = (uint32_t)(intended_ns - p->base_ns);
    p->next_seq++;
    return packet_size(p) + block_cost(p, p->cfg.max_msg_len) > p->cfg.max_datagram ? MD_PACK_FLUSH
                                                                                    : MD_PACK_ADDED;
}

bool md_packer_due(const struct md_packer *p, uint64_t now_ns)
{
    return p->count > 0 && now_ns - p->first_added_ns >= p->cfg.max_delay_ns;
}

uint64_t md_packer_deadline(const struct md_packer *p)
{
    return p->count > 0 ? p->first_added_ns + p->cfg.max_delay_ns : UINT64_MAX;
}

uint32_t md_packer_pending(const struct md_packer *p)
{
    return p->count;
}

uint64_t md_packer_next_seq(const struct md_packer *p)
{
    return p->next_seq;
}

size_t md_packer_flush(struct md_packer *p, const uint8_t **data, size_t *len)
{
    *data = p->buf;
    *len = 0;
    if (p->count == 0)
        return 0;
    write_header(p, p->packet_seq, (uint16_t)p->count, p->base_ns);
    if (p->cfg.intended_times)
        for (uint32_t i = 0; i < p->count; i++)
            md_put_be32(p->buf + p->used + i * MD_DELTA_LEN, p->deltas[i]);
    *len = packet_size(p);
    p->counters.packets++;
    p->counters.messages += p->count;
    p->counters.bytes += *len;
    p->count = 0;
    p->used = header_len(p->cfg.intended_times);
    return *len;
}

int md_packer_heartbeat(struct md_packer *p, bool end_of_session, uint64_t now_ns,
                        const uint8_t **data, size_t *len)
{
    if (p->count > 0)
        return -EBUSY;
    write_header(p, p->next_seq, end_of_session ? MD_COUNT_END_OF_SESSION : MD_COUNT_HEARTBEAT,
                 now_ns);
    *data = p->buf;
    *len = header_len(p->cfg.intended_times);
    p->counters.heartbeats++;
    p->counters.bytes += *len;
    if (end_of_session)
        p->ended = true;
    return (int)*len;
}

/* ---- unpacker ---- */

const char *md_unpack_error_name(int error)
{
    static const char *const names[MD_UNPACK__COUNT] = {
        [MD_UNPACK_SHORT] = "short",
        [MD_UNPACK_TRUNCATED] = "truncated",
        [MD_UNPACK_ZERO_LENGTH] = "zero_length",
        [MD_UNPACK_TOO_LONG] = "too_long",
        [MD_UNPACK_TRAILING] = "trailing",
        [MD_UNPACK_SEQ_WRAP] = "seq_wrap",
        [MD_UNPACK_TIME_WRAP] = "time_wrap",
    };
    if (error < 0)
        error = -error;
    return error > 0 && error < MD_UNPACK__COUNT ? names[error] : "?";
}

void md_unpacker_init(struct md_unpacker *u, const struct md_unpacker_config *cfg)
{
    memset(u, 0, sizeof(*u));
    u->cfg = *cfg;
}

static int reject(struct md_unpacker *u, enum md_unpack_error why)
{
    u->rejected[why]++;
    return -(int)why;
}

int md_unpack(struct md_unpacker *u, const uint8_t *pkt, size_t len, struct md_packet_view *v)
{
    bool times = u->cfg.intended_times;
    size_t off = header_len(times);
    if (len < off)
        return reject(u, MD_UNPACK_SHORT);
    memset(v, 0, sizeof(*v));
    memcpy(v->session, pkt, MD_SESSION_LEN);
    v->seq = md_get_be64(pkt + MD_SESSION_LEN);
    v->count = md_get_be16(pkt + MD_SESSION_LEN + 8);
    v->has_times = times;
    if (times)
        v->intended_ns = md_get_be64(pkt + MD_HEADER_LEN);
    v->pkt = pkt;
    v->next_off = off;
    if (v->count == MD_COUNT_HEARTBEAT || v->count == MD_COUNT_END_OF_SESSION) {
        if (len != off)
            return reject(u, MD_UNPACK_TRAILING);
        if (v->count == MD_COUNT_END_OF_SESSION) {
            v->kind = MD_PACKET_END_OF_SESSION;
            v->count = 0;
            u->ends++;
        } else {
            v->kind = MD_PACKET_HEARTBEAT;
            u->heartbeats++;
        }
        return 0;
    }
    v->kind = MD_PACKET_DATA;
    if (v->seq > UINT64_MAX - (v->count - 1))
        return reject(u, MD_UNPACK_SEQ_WRAP);
    /* The trailer of deltas is at the end: message blocks must end exactly where it starts. */
    size_t trailer = times ? (size_t)v->count * MD_DELTA_LEN : 0;
    if (len - off < trailer)
        return reject(u, MD_UNPACK_TRUNCATED);
    size_t end = len - trailer;
    for (uint32_t i = 0; i < v->count; i++) {
        if (end - off < 2)
            return reject(u, MD_UNPACK_TRUNCATED);
        uint16_t n = md_get_be16(pkt + off);
        if (n == 0)
            return reject(u, MD_UNPACK_ZERO_LENGTH);
        if (n > u->cfg.max_msg_len)
            return reject(u, MD_UNPACK_TOO_LONG);
        if (end - off - 2 < n)
            return reject(u, MD_UNPACK_TRUNCATED);
        off += 2u + n;
    }
    if (off != end)
        return reject(u, MD_UNPACK_TRAILING);
    if (times) {
        v->deltas = pkt + end;
        for (uint32_t i = 0; i < v->count; i++)
            if (md_get_be32(v->deltas + i * MD_DELTA_LEN) > UINT64_MAX - v->intended_ns)
                return reject(u, MD_UNPACK_TIME_WRAP);
    }
    u->packets++;
    u->messages += v->count;
    return 0;
}

bool md_packet_next(struct md_packet_view *v, struct md_msg *m)
{
    if (v->next_index >= v->count)
        return false;
    /* md_unpack checked every length: the blocks are read without further bounds checks. */
    m->len = md_get_be16(v->pkt + v->next_off);
    m->data = v->pkt + v->next_off + 2;
    m->seq = v->seq + v->next_index;
    m->intended_ns =
        v->has_times ? v->intended_ns + md_get_be32(v->deltas + v->next_index * MD_DELTA_LEN) : 0;
    v->next_off += 2u + m->len;
    v->next_index++;
    return true;
}
