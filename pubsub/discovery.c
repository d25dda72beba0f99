/* SPDX-License-Identifier: BSD-2-Clause */
/* discovery.c - encode/decode of discovery announcements through protobuf-c, with full validation.
 */
#include "discovery.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include "control.pb-c.h"
#include "pb_arena.h"
#include "rdps_error.h"

int rdps__announce_encode(const struct rdps_announce *a, uint8_t *buf, size_t cap)
{
    Rdps__Announce msg = RDPS__ANNOUNCE__INIT;
    char group[16], host[16];

    msg.role = a->role == RDPS_ROLE_PUBLISHER ? RDPS__ANNOUNCE__ROLE__PUBLISHER
                                              : RDPS__ANNOUNCE__ROLE__SUBSCRIBER;
    msg.topic = (char *)a->topic;
    msg.topic_id = a->topic_id;
    msg.group = rdps__ipv4_format(a->group, group, sizeof(group));
    msg.session_id = a->session_id;
    msg.qpn = a->qpn;
    msg.qkey = a->qkey;
    msg.gid.data = (uint8_t *)a->gid;
    msg.gid.len = sizeof(a->gid);
    msg.reliable = a->reliable;
    msg.flow_tag = a->flow_tag;
    msg.receiver_id = a->receiver_id;
    msg.unicast = a->unicast;
    msg.host = a->host ? rdps__ipv4_format(a->host, host, sizeof(host)) : (char *)"";
    msg.cm_port = a->cm_port;
    msg.pid = a->pid;
    msg.interval_ms = a->interval_ms;
    msg.leaving = a->leaving;
    msg.announce_seq = a->announce_seq;

    size_t need = rdps__announce__get_packed_size(&msg);
    if (need > cap || need > RDPS_ANNOUNCE_MAX_BYTES)
        return rdps__set_err(RDPS_ENOSPC, "announcement needs %zu bytes, room for %zu", need, cap);
    return (int)rdps__announce__pack(&msg, buf);
}

static int bad(const char *why)
{
    return rdps__set_err(RDPS_EBADFRAME, "bad announcement: %s", why);
}

int rdps__announce_decode(const uint8_t *buf, size_t len, struct rdps_announce *out)
{
    if (len > RDPS_ANNOUNCE_MAX_BYTES)
        return bad("too long");
    struct rdps_pb_arena arena;
    ProtobufCAllocator allocator = rdps__pb_arena_allocator(&arena);
    Rdps__Announce *msg = rdps__announce__unpack(&allocator, len, buf);
    if (msg == NULL)
        return bad("not a valid protobuf Announce");

    int rc = 0;
    memset(out, 0, sizeof(*out));
    if (msg->role == RDPS__ANNOUNCE__ROLE__PUBLISHER)
        out->role = RDPS_ROLE_PUBLISHER;
    else if (msg->role == RDPS__ANNOUNCE__ROLE__SUBSCRIBER)
        out->role = RDPS_ROLE_SUBSCRIBER;
    else {
        rc = bad("unknown role");
        goto done;
    }
    if (rdps__topic_name_check(msg->topic) != 0) {
        rc = bad("invalid topic name");
        goto done;
    }
    strcpy(out->topic, msg->topic); /* length checked above */
    out->topic_id = msg->topic_id;
    if (out->topic_id != rdps__topic_hash_id(out->topic)) {
        rc = bad("topic id does not match the topic name");
        goto done;
    }
    if (rdps__mcast_addr_parse(msg->group, &out->group) != 0) {
        rc = bad("group is not an IPv4 multicast address");
        goto done;
    }
    if (msg->session_id == 0) {
        rc = bad("session id is 0");
        goto done;
    }
    if (msg->qpn == 0 || msg->qpn > 0xffffff) {
        rc = bad("QPN outside 1..2^24-1");
        goto done;
    }
    if (msg->gid.len != sizeof(out->gid)) {
        rc = bad("GID is not 16 bytes");
        goto done;
    }
    if (msg->cm_port > 0xffff) {
        rc = bad("cm_port above 65535");
        goto done;
    }
    if (msg->host != NULL && msg->host[0] != '\0') {
        struct in_addr in;
        if (inet_pton(AF_INET, msg->host, &in) != 1) {
            rc = bad("host is not a dotted IPv4 address");
            goto done;
        }
        out->host = ntohl(in.s_addr);
    }
    out->session_id = msg->session_id;
    out->qpn = msg->qpn;
    out->qkey = msg->qkey;
    memcpy(out->gid, msg->gid.data, sizeof(out->gid));
    out->reliable = msg->reliable;
    out->flow_tag = msg->flow_tag;
    out->receiver_id = msg->receiver_id;
    out->unicast = msg->unicast;
    out->cm_port = (uint16_t)msg->cm_port;
    out->pid = msg->pid;
    out->interval_ms = msg->interval_ms;
    out->leaving = msg->leaving;
    out->announce_seq = msg->announce_seq;
done:
    /* Nothing to free: the message lives in `arena` (free_unpacked would only walk it). */
    return rc;
}
