/* SPDX-License-Identifier: BSD-2-Clause */
/* sa_mad.c - Subnet Administration MAD codec: header and MCMemberRecord layouts, response
 * validation. */
#include "rdps_sa_mad.h"

#include <stdbool.h>
#include <string.h>

#include "rdps_error.h"

/* IBA wire fields are big-endian; these are the only accessors used below. */
static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    put_be16(p, (uint16_t)(v >> 16));
    put_be16(p + 2, (uint16_t)v);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

static uint16_t get_be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
    return ((uint32_t)get_be16(p) << 16) | get_be16(p + 2);
}

static uint64_t get_be64(const uint8_t *p)
{
    return ((uint64_t)get_be32(p) << 32) | get_be32(p + 4);
}

/* MAD common header offsets (IBA 13.4.3). */
enum {
    MAD_OFF_BASE_VERSION = 0,
    MAD_OFF_MGMT_CLASS = 1,
    MAD_OFF_CLASS_VERSION = 2,
    MAD_OFF_METHOD = 3,
    MAD_OFF_STATUS = 4,
    MAD_OFF_CLASS_SPECIFIC = 6,
    MAD_OFF_TID = 8,
    MAD_OFF_ATTR_ID = 16,
    MAD_OFF_RESERVED = 18,
    MAD_OFF_ATTR_MOD = 20,
};

/* RMPP + SA header offsets, relative to byte 24 of the MAD. */
enum {
    SA_OFF_RMPP_VERSION = 0,
    SA_OFF_RMPP_TYPE = 1,
    SA_OFF_RMPP_TIME_FLAGS = 2,
    SA_OFF_RMPP_STATUS = 3,
    SA_OFF_RMPP_DATA1 = 4,
    SA_OFF_RMPP_DATA2 = 8,
    SA_OFF_SM_KEY = 12,
    SA_OFF_ATTR_OFFSET = 20,
    SA_OFF_RESERVED = 22,
    SA_OFF_COMP_MASK = 24,
    SA_HDR_LEN = 32,
};

/* MCMemberRecord offsets (IBA 15.2.5.17). */
enum {
    MCM_OFF_MGID = 0,
    MCM_OFF_PORT_GID = 16,
    MCM_OFF_QKEY = 32,
    MCM_OFF_MLID = 36,
    MCM_OFF_MTU = 38, /* selector:2 | mtu:6 */
    MCM_OFF_TCLASS = 39,
    MCM_OFF_PKEY = 40,
    MCM_OFF_RATE = 42,        /* selector:2 | rate:6 */
    MCM_OFF_PKT_LIFE = 43,    /* selector:2 | life:6 */
    MCM_OFF_SL_FLOW_HOP = 44, /* sl:4 | flow label:20 | hop limit:8 */
    MCM_OFF_SCOPE_JOIN = 48,  /* scope:4 | join state:4 */
    MCM_OFF_PROXY_JOIN = 49,  /* proxy join:1 | reserved:7 */
    MCM_OFF_RESERVED = 50,
};

_Static_assert(RDPS_SA_DATA_OFFSET - RDPS_SA_RMPP_HDR_OFFSET == SA_HDR_LEN, "SA header size");
_Static_assert(RDPS_SA_DATA_OFFSET + RDPS_SA_DATA_SIZE == RDPS_MAD_SIZE, "MAD size");
_Static_assert(MCM_OFF_RESERVED + 2 == RDPS_SA_MCMEMBER_RECORD_SIZE, "MCMemberRecord size");
_Static_assert(RDPS_SA_HDR_OFFSET == RDPS_SA_RMPP_HDR_OFFSET + SA_OFF_SM_KEY, "SA header offset");

static uint8_t selector_field(uint8_t selector, uint8_t value)
{
    return (uint8_t)(((selector & 0x3u) << 6) | (value & 0x3fu));
}

void rdps__mad_hdr_encode(uint8_t out[RDPS_MAD_HDR_SIZE], const struct rdps_mad_hdr *hdr)
{
    out[MAD_OFF_BASE_VERSION] = hdr->base_version;
    out[MAD_OFF_MGMT_CLASS] = hdr->mgmt_class;
    out[MAD_OFF_CLASS_VERSION] = hdr->class_version;
    out[MAD_OFF_METHOD] = hdr->method;
    put_be16(out + MAD_OFF_STATUS, hdr->status);
    put_be16(out + MAD_OFF_CLASS_SPECIFIC, hdr->class_specific);
    put_be64(out + MAD_OFF_TID, hdr->tid);
    put_be16(out + MAD_OFF_ATTR_ID, hdr->attr_id);
    put_be16(out + MAD_OFF_RESERVED, 0);
    put_be32(out + MAD_OFF_ATTR_MOD, hdr->attr_mod);
}

void rdps__mad_hdr_decode(const uint8_t in[RDPS_MAD_HDR_SIZE], struct rdps_mad_hdr *hdr)
{
    hdr->base_version = in[MAD_OFF_BASE_VERSION];
    hdr->mgmt_class = in[MAD_OFF_MGMT_CLASS];
    hdr->class_version = in[MAD_OFF_CLASS_VERSION];
    hdr->method = in[MAD_OFF_METHOD];
    hdr->status = get_be16(in + MAD_OFF_STATUS);
    hdr->class_specific = get_be16(in + MAD_OFF_CLASS_SPECIFIC);
    hdr->tid = get_be64(in + MAD_OFF_TID);
    hdr->attr_id = get_be16(in + MAD_OFF_ATTR_ID);
    hdr->attr_mod = get_be32(in + MAD_OFF_ATTR_MOD);
}

void rdps__sa_hdr_encode(uint8_t out[SA_HDR_LEN], const struct rdps_sa_hdr *hdr)
{
    out[SA_OFF_RMPP_VERSION] = hdr->rmpp_version;
    out[SA_OFF_RMPP_TYPE] = hdr->rmpp_type;
    out[SA_OFF_RMPP_TIME_FLAGS] =
        (uint8_t)(((hdr->rmpp_resp_time & 0x1fu) << 3) | (hdr->rmpp_flags & 0x7u));
    out[SA_OFF_RMPP_STATUS] = hdr->rmpp_status;
    put_be32(out + SA_OFF_RMPP_DATA1, hdr->rmpp_data1);
    put_be32(out + SA_OFF_RMPP_DATA2, hdr->rmpp_data2);
    put_be64(out + SA_OFF_SM_KEY, hdr->sm_key);
    put_be16(out + SA_OFF_ATTR_OFFSET, hdr->attr_offset);
    put_be16(out + SA_OFF_RESERVED, 0);
    put_be64(out + SA_OFF_COMP_MASK, hdr->comp_mask);
}

void rdps__sa_hdr_decode(const uint8_t in[SA_HDR_LEN], struct rdps_sa_hdr *hdr)
{
    hdr->rmpp_version = in[SA_OFF_RMPP_VERSION];
    hdr->rmpp_type = in[SA_OFF_RMPP_TYPE];
    hdr->rmpp_resp_time = (uint8_t)(in[SA_OFF_RMPP_TIME_FLAGS] >> 3);
    hdr->rmpp_flags = (uint8_t)(in[SA_OFF_RMPP_TIME_FLAGS] & 0x7u);
    hdr->rmpp_status = in[SA_OFF_RMPP_STATUS];
    hdr->rmpp_data1 = get_be32(in + SA_OFF_RMPP_DATA1);
    hdr->rmpp_data2 = get_be32(in + SA_OFF_RMPP_DATA2);
    hdr->sm_key = get_be64(in + SA_OFF_SM_KEY);
    hdr->attr_offset = get_be16(in + SA_OFF_ATTR_OFFSET);
    hdr->comp_mask = get_be64(in + SA_OFF_COMP_MASK);
}

void rdps__sa_mcmember_encode(uint8_t out[RDPS_SA_MCMEMBER_RECORD_SIZE],
                              const struct rdps_sa_mcmember *rec)
{
    memcpy(out + MCM_OFF_MGID, rec->mgid, 16);
    memcpy(out + MCM_OFF_PORT_GID, rec->port_gid, 16);
    put_be32(out + MCM_OFF_QKEY, rec->qkey);
    put_be16(out + MCM_OFF_MLID, rec->mlid);
    out[MCM_OFF_MTU] = selector_field(rec->mtu_selector, rec->mtu);
    out[MCM_OFF_TCLASS] = rec->tclass;
    put_be16(out + MCM_OFF_PKEY, rec->pkey);
    out[MCM_OFF_RATE] = selector_field(rec->rate_selector, rec->rate);
    out[MCM_OFF_PKT_LIFE] = selector_field(rec->pkt_life_selector, rec->pkt_life);
    put_be32(out + MCM_OFF_SL_FLOW_HOP, ((uint32_t)(rec->sl & 0xfu) << 28) |
                                            ((rec->flow_label & 0xfffffu) << 8) | rec->hop_limit);
    out[MCM_OFF_SCOPE_JOIN] = (uint8_t)(((rec->scope & 0xfu) << 4) | (rec->join_state & 0xfu));
    out[MCM_OFF_PROXY_JOIN] = (uint8_t)((rec->proxy_join & 0x1u) << 7);
    put_be16(out + MCM_OFF_RESERVED, 0);
}

void rdps__sa_mcmember_decode(const uint8_t in[RDPS_SA_MCMEMBER_RECORD_SIZE],
                              struct rdps_sa_mcmember *rec)
{
    uint32_t sl_flow_hop = get_be32(in + MCM_OFF_SL_FLOW_HOP);

    memcpy(rec->mgid, in + MCM_OFF_MGID, 16);
    memcpy(rec->port_gid, in + MCM_OFF_PORT_GID, 16);
    rec->qkey = get_be32(in + MCM_OFF_QKEY);
    rec->mlid = get_be16(in + MCM_OFF_MLID);
    rec->mtu_selector = (uint8_t)(in[MCM_OFF_MTU] >> 6);
    rec->mtu = (uint8_t)(in[MCM_OFF_MTU] & 0x3fu);
    rec->tclass = in[MCM_OFF_TCLASS];
    rec->pkey = get_be16(in + MCM_OFF_PKEY);
    rec->rate_selector = (uint8_t)(in[MCM_OFF_RATE] >> 6);
    rec->rate = (uint8_t)(in[MCM_OFF_RATE] & 0x3fu);
    rec->pkt_life_selector = (uint8_t)(in[MCM_OFF_PKT_LIFE] >> 6);
    rec->pkt_life = (uint8_t)(in[MCM_OFF_PKT_LIFE] & 0x3fu);
    rec->sl = (uint8_t)(sl_flow_hop >> 28);
    rec->flow_label = (sl_flow_hop >> 8) & 0xfffffu;
    rec->hop_limit = (uint8_t)sl_flow_hop;
    rec->scope = (uint8_t)(in[MCM_OFF_SCOPE_JOIN] >> 4);
    rec->join_state = (uint8_t)(in[MCM_OFF_SCOPE_JOIN] & 0xfu);
    rec->proxy_join = (uint8_t)(in[MCM_OFF_PROXY_JOIN] >> 7);
}

int rdps__sa_mcmember_query_encode(uint8_t *out, size_t cap, uint64_t tid,
                                   const struct rdps_sa_mcmember *match, uint64_t comp_mask)
{
    if (out == NULL || (match == NULL && comp_mask != 0) || (comp_mask >> 18) != 0)
        return rdps__set_err(RDPS_EINVAL, "SA MCMemberRecord query: bad arguments (mask 0x%llx)",
                             (unsigned long long)comp_mask);
    if (cap < RDPS_MAD_SIZE)
        return rdps__set_err(RDPS_ENOSPC, "SA MCMemberRecord query needs %d bytes, got %zu",
                             RDPS_MAD_SIZE, cap);

    struct rdps_mad_hdr mad = {
        .base_version = RDPS_MAD_BASE_VERSION,
        .mgmt_class = RDPS_MAD_CLASS_SUBN_ADM,
        .class_version = RDPS_MAD_SA_CLASS_VERSION,
        .method = RDPS_MAD_METHOD_GET_TABLE,
        .tid = tid,
        .attr_id = RDPS_SA_ATTR_MCMEMBER_RECORD,
    };
    /* A request is one segment: the kernel's RMPP layer only needs the version set. */
    struct rdps_sa_hdr sa = {
        .rmpp_version = RDPS_MAD_RMPP_VERSION,
        .attr_offset = RDPS_SA_MCMEMBER_RECORD_STRIDE / 8,
        .comp_mask = comp_mask,
    };

    memset(out, 0, RDPS_MAD_SIZE);
    rdps__mad_hdr_encode(out, &mad);
    rdps__sa_hdr_encode(out + RDPS_SA_RMPP_HDR_OFFSET, &sa);
    if (match != NULL)
        rdps__sa_mcmember_encode(out + RDPS_SA_DATA_OFFSET, match);
    return RDPS_MAD_SIZE;
}

int rdps__sa_mcmember_response_decode(const uint8_t *in, size_t len, uint64_t tid,
                                      struct rdps_sa_mcmember *out, size_t max)
{
    struct rdps_mad_hdr mad;
    struct rdps_sa_hdr sa;

    if (in == NULL || (out == NULL && max != 0))
        return rdps__set_err(RDPS_EINVAL, "SA response decode: bad arguments");
    if (len < RDPS_SA_DATA_OFFSET)
        return rdps__set_err(RDPS_EBADFRAME, "SA response too short: %zu bytes (header is %d)", len,
                             RDPS_SA_DATA_OFFSET);
    rdps__mad_hdr_decode(in, &mad);
    if (mad.base_version != RDPS_MAD_BASE_VERSION || mad.mgmt_class != RDPS_MAD_CLASS_SUBN_ADM ||
        mad.class_version != RDPS_MAD_SA_CLASS_VERSION)
        return rdps__set_err(RDPS_EBADFRAME,
                             "SA response has base version %u, class 0x%02x, class version %u "
                             "(want 1, 0x03, 2)",
                             mad.base_version, mad.mgmt_class, mad.class_version);
    if ((mad.method & RDPS_MAD_METHOD_RESPONSE_BIT) == 0)
        return rdps__set_err(RDPS_EBADFRAME, "SA MAD method 0x%02x is not a response", mad.method);
    if ((uint32_t)mad.tid != (uint32_t)tid)
        return rdps__set_err(RDPS_EBADFRAME, "SA response transaction id 0x%08x, expected 0x%08x",
                             (unsigned)(uint32_t)mad.tid, (unsigned)(uint32_t)tid);
    if (mad.attr_id != RDPS_SA_ATTR_MCMEMBER_RECORD)
        return rdps__set_err(RDPS_EBADFRAME, "SA response attribute 0x%04x, expected 0x%04x",
                             mad.attr_id, RDPS_SA_ATTR_MCMEMBER_RECORD);
    if (mad.status != 0)
        return rdps__set_err(RDPS_EPROTO, "SA answered status 0x%04x: %s", mad.status,
                             rdps__sa_status_text(mad.status));
    if (mad.method != RDPS_MAD_METHOD_GET_TABLE_RESP && mad.method != RDPS_MAD_METHOD_GET_RESP)
        return rdps__set_err(RDPS_EBADFRAME, "SA response method 0x%02x unexpected", mad.method);

    rdps__sa_hdr_decode(in + RDPS_SA_RMPP_HDR_OFFSET, &sa);
    size_t data_len = len - RDPS_SA_DATA_OFFSET;
    /*
     * With RMPP active the first segment's PayloadLength counts the SA header
     * (20 bytes) plus every record; it can only shrink what the buffer holds
     * (a full 256-byte MAD carries padding after the last record).
     */
    if ((sa.rmpp_flags & RDPS_MAD_RMPP_FLAG_ACTIVE) != 0 && sa.rmpp_data2 != 0) {
        if (sa.rmpp_data2 < SA_HDR_LEN - SA_OFF_SM_KEY)
            return rdps__set_err(RDPS_EBADFRAME, "SA RMPP payload length %u below the SA header",
                                 (unsigned)sa.rmpp_data2);
        size_t payload = sa.rmpp_data2 - (SA_HDR_LEN - SA_OFF_SM_KEY);
        if (payload < data_len)
            data_len = payload;
    }
    if (mad.method == RDPS_MAD_METHOD_GET_RESP) {
        /* A Get answer is one record in a single MAD. */
        if (data_len < RDPS_SA_MCMEMBER_RECORD_SIZE)
            return rdps__set_err(RDPS_EBADFRAME, "SA GetResp holds %zu data bytes, record is %d",
                                 data_len, RDPS_SA_MCMEMBER_RECORD_SIZE);
        if (max > 0)
            rdps__sa_mcmember_decode(in + RDPS_SA_DATA_OFFSET, out);
        return 1;
    }
    bool rmpp_active = (sa.rmpp_flags & RDPS_MAD_RMPP_FLAG_ACTIVE) != 0;
    size_t stride = (size_t)sa.attr_offset * 8;
    if (stride == 0) {
        /* An empty table may leave AttributeOffset 0; records without a stride are malformed. */
        if (rmpp_active && data_len >= RDPS_SA_MCMEMBER_RECORD_SIZE)
            return rdps__set_err(RDPS_EBADFRAME,
                                 "SA table response carries %zu data bytes but AttributeOffset 0",
                                 data_len);
        return 0;
    }
    if (stride < RDPS_SA_MCMEMBER_RECORD_SIZE)
        return rdps__set_err(RDPS_EBADFRAME,
                             "SA AttributeOffset %u words (%zu bytes) is smaller than an "
                             "MCMemberRecord (%d bytes)",
                             sa.attr_offset, stride, RDPS_SA_MCMEMBER_RECORD_SIZE);
    size_t count = data_len / stride;
    /* The last record need not carry its trailing padding. */
    if (data_len - count * stride >= RDPS_SA_MCMEMBER_RECORD_SIZE)
        count++;
    if (!rmpp_active) {
        /*
         * Without RMPP nothing says where the table ends inside the 200 data
         * bytes; an all-zero MGID is padding, never a group.
         */
        static const uint8_t zero_gid[16];
        for (size_t i = 0; i < count; i++) {
            if (memcmp(in + RDPS_SA_DATA_OFFSET + i * stride, zero_gid, 16) == 0) {
                count = i;
                break;
            }
        }
    }
    if (count > (size_t)0x7fffffff)
        return rdps__set_err(RDPS_EBADFRAME, "SA response record count overflows");
    for (size_t i = 0; i < count && i < max; i++)
        rdps__sa_mcmember_decode(in + RDPS_SA_DATA_OFFSET + i * stride, &out[i]);
    return (int)count;
}

const char *rdps__sa_status_text(uint16_t status)
{
    if (status == 0)
        return "success";
    if (status & 0x0001)
        return "SA busy, try again later";
    if (status & 0x0002)
        return "redirect required (not supported)";
    switch ((status >> 2) & 0x7) {
    case 1:
        return "bad base or class version";
    case 2:
        return "method not supported";
    case 3:
        return "method/attribute combination not supported";
    case 7:
        return "invalid attribute or modifier value";
    default:
        break;
    }
    switch ((status >> 8) & 0xff) {
    case 1:
        return "SA out of resources";
    case 2:
        return "request invalid";
    case 3:
        return "no records match the query";
    case 4:
        return "too many records match the query";
    case 5:
        return "invalid GID in the request";
    case 6:
        return "request has insufficient components";
    case 7:
        return "request denied";
    default:
        return "unknown status";
    }
}

unsigned rdps__ib_mtu_bytes(uint8_t mtu)
{
    return (mtu >= 1 && mtu <= 5) ? 128u << mtu : 0;
}

const char *rdps__ib_rate_text(uint8_t rate)
{
    static const char *const names[] = {
        [2] = "2.5 Gb/s",  [3] = "10 Gb/s",  [4] = "30 Gb/s",   [5] = "5 Gb/s",
        [6] = "20 Gb/s",   [7] = "40 Gb/s",  [8] = "60 Gb/s",   [9] = "80 Gb/s",
        [10] = "120 Gb/s", [11] = "14 Gb/s", [12] = "56 Gb/s",  [13] = "112 Gb/s",
        [14] = "168 Gb/s", [15] = "25 Gb/s", [16] = "100 Gb/s", [17] = "200 Gb/s",
        [18] = "300 Gb/s", [19] = "28 Gb/s", [20] = "50 Gb/s",  [21] = "400 Gb/s",
        [22] = "600 Gb/s",
    };
    if (rate < sizeof(names) / sizeof(names[0]) && names[rate] != NULL)
        return names[rate];
    return "unknown";
}

void rdps__ib_mgid_from_ipv4(uint32_t ipv4_host_order, uint16_t pkey, uint8_t scope,
                             uint8_t mgid[16])
{
    memset(mgid, 0, 16);
    mgid[0] = 0xff;
    mgid[1] = (uint8_t)(0x10 | (scope & 0xfu));
    mgid[2] = 0x40; /* IPv4 signature ... */
    mgid[3] = 0x01; /* ... with rdma_cm's byte (IPoIB itself uses 0x1b) */
    put_be16(mgid + 4, pkey);
    mgid[12] = (uint8_t)((ipv4_host_order >> 24) & 0x0fu);
    mgid[13] = (uint8_t)(ipv4_host_order >> 16);
    mgid[14] = (uint8_t)(ipv4_host_order >> 8);
    mgid[15] = (uint8_t)ipv4_host_order;
}
