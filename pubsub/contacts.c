/* SPDX-License-Identifier: BSD-2-Clause */
/* contacts.c - encode/decode of unicast discovery's peer lists through protobuf-c, with full
 * validation, and the parser of rdps_config.peers. */
#include "contacts.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "control.pb-c.h"
#include "pb_arena.h"
#include "discovery.h"
#include "rdps_error.h"
#include "topic.h"

#define QPN_MAX 0xfffffeu /* 0xffffff is the multicast QPN */

bool rdps__contacts_from_source(const struct rdps_contacts_msg *m, const struct rdps_source *src)
{
    if (m->qpn != src->qpn)
        return false;
    return src->has_gid ? memcmp(m->gid, src->gid, 16) == 0 : m->lid == src->lid;
}

int rdps__contacts_encode(const struct rdps_contacts_msg *m, uint8_t *buf, size_t cap)
{
    Rdps__Contacts msg = RDPS__CONTACTS__INIT;
    Rdps__Contacts__Sender sender = RDPS__CONTACTS__SENDER__INIT;
    Rdps__Contacts__Peer peers[RDPS_CONTACTS_PER_MESSAGE];
    Rdps__Contacts__Peer *peer_ptrs[RDPS_CONTACTS_PER_MESSAGE];
    char host[16];

    if (m->count > RDPS_CONTACTS_PER_MESSAGE)
        return rdps__set_err(RDPS_EINVAL, "contacts: %u peers, at most %d", m->count,
                             RDPS_CONTACTS_PER_MESSAGE);
    sender.gid.data = (uint8_t *)m->gid;
    sender.gid.len = sizeof(m->gid);
    sender.lid = m->lid;
    sender.qpn = m->qpn;
    msg.sender = &sender;
    msg.host = m->host ? rdps__ipv4_format(m->host, host, sizeof(host)) : (char *)"";
    msg.cm_port = m->cm_port;
    msg.interval_ms = m->interval_ms;
    msg.leaving = m->leaving;
    for (uint32_t i = 0; i < m->count; i++) {
        Rdps__Contacts__Peer init = RDPS__CONTACTS__PEER__INIT;
        peers[i] = init;
        if (m->peers[i].has_gid) {
            peers[i].gid.data = (uint8_t *)m->peers[i].gid;
            peers[i].gid.len = 16;
        } else {
            peers[i].lid = m->peers[i].lid;
        }
        peers[i].qpn = m->peers[i].qpn;
        peer_ptrs[i] = &peers[i];
    }
    msg.n_peers = m->count;
    msg.peers = peer_ptrs;
    size_t need = rdps__contacts__get_packed_size(&msg);
    if (need > cap || need > RDPS_ANNOUNCE_MAX_BYTES)
        return rdps__set_err(RDPS_ENOSPC, "contacts need %zu bytes, room for %zu", need, cap);
    return (int)rdps__contacts__pack(&msg, buf);
}

static int bad(const char *why)
{
    return rdps__set_err(RDPS_EBADFRAME, "bad contacts: %s", why);
}

int rdps__contacts_decode(const uint8_t *buf, size_t len, struct rdps_contacts_msg *out)
{
    if (len > RDPS_ANNOUNCE_MAX_BYTES)
        return bad("too long");
    struct rdps_pb_arena arena;
    ProtobufCAllocator allocator = rdps__pb_arena_allocator(&arena);
    Rdps__Contacts *msg = rdps__contacts__unpack(&allocator, len, buf);
    if (msg == NULL)
        return bad("not a valid protobuf Contacts");
    memset(out, 0, sizeof(*out));
    const Rdps__Contacts__Sender *s = msg->sender;
    if (s == NULL)
        return bad("no sender");
    if (s->qpn == 0 || s->qpn > QPN_MAX)
        return bad("sender QPN outside 1..2^24-2");
    if (s->gid.len != 16)
        return bad("sender GID is not 16 bytes");
    if (s->lid > 0xffff)
        return bad("sender LID above 65535");
    memcpy(out->gid, s->gid.data, 16);
    out->lid = (uint16_t)s->lid;
    out->qpn = s->qpn;
    if (msg->host != NULL && msg->host[0] != '\0') {
        struct in_addr in;
        if (inet_pton(AF_INET, msg->host, &in) != 1)
            return bad("host is not a dotted IPv4 address");
        out->host = ntohl(in.s_addr);
    }
    if (msg->cm_port > 0xffff)
        return bad("cm_port above 65535");
    out->cm_port = (uint16_t)msg->cm_port;
    out->interval_ms = msg->interval_ms;
    out->leaving = msg->leaving;
    if (msg->n_peers > RDPS_CONTACTS_PER_MESSAGE)
        return bad("more than 16 peers");
    for (size_t i = 0; i < msg->n_peers; i++) {
        const Rdps__Contacts__Peer *p = msg->peers[i];
        struct rdps_source *o = &out->peers[i];
        if (p->qpn == 0 || p->qpn > QPN_MAX)
            return bad("peer QPN outside 1..2^24-2");
        if (p->gid.len == 16 && p->lid == 0) {
            memcpy(o->gid, p->gid.data, 16);
            o->has_gid = 1;
        } else if (p->gid.len == 0 && p->lid != 0 && p->lid <= 0xffff) {
            o->lid = (uint16_t)p->lid;
        } else {
            return bad("peer needs a 16-byte GID or a LID of 1..65535, not both");
        }
        o->qpn = p->qpn;
    }
    out->count = (uint32_t)msg->n_peers;
    return 0;
}

int rdps__seeds_parse(const char *text, struct rdps_seed *out, size_t max)
{
    size_t n = 0;
    if (text == NULL)
        return 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        size_t len = strcspn(p, ",");
        size_t item = len;
        while (item > 0 && (p[item - 1] == ' ' || p[item - 1] == '\t'))
            item--;
        char addr[64];
        if (item == 0 || item >= sizeof(addr))
            return rdps__set_err(RDPS_EINVAL, "peers: empty or overlong item in '%s'", text);
        memcpy(addr, p, item);
        addr[item] = '\0';
        unsigned long port = 0;
        char *colon = strchr(addr, ':');
        if (colon != NULL) {
            char *end = NULL;
            *colon = '\0';
            port = strtoul(colon + 1, &end, 10);
            if (end == colon + 1 || *end != '\0' || port == 0 || port > 65535)
                return rdps__set_err(RDPS_EINVAL, "peers: '%.*s': port must be 1..65535", (int)item,
                                     p);
        }
        struct in_addr in;
        if (inet_pton(AF_INET, addr, &in) != 1)
            return rdps__set_err(RDPS_EINVAL,
                                 "peers: '%.*s' is not ip[:port] with a dotted IPv4 address",
                                 (int)item, p);
        if (n == max)
            return rdps__set_err(RDPS_EINVAL, "peers: more than %zu seeds in '%s'", max, text);
        out[n].ipv4 = ntohl(in.s_addr);
        out[n].port = (uint16_t)port;
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    return (int)n;
}
