/* SPDX-License-Identifier: BSD-2-Clause */
/* test_sa_mad.c - SA MAD codec checked byte-for-byte against the IBA layouts (MAD, RMPP/SA header,
 * MCMemberRecord). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/umad_sa.h>
#include <infiniband/umad_sa_mcm.h>

#include "rdps_error.h"
#include "rdps_sa_mad.h"

/* The record used throughout, with the bytes IBA 15.2.5.17 says it must produce. */
static struct rdps_sa_mcmember sample_record(void)
{
    struct rdps_sa_mcmember r = {
        .mgid = {0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff},
        .port_gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x23, 0x45},
        .qkey = 0x01234567,
        .mlid = 0xc001,
        .mtu_selector = 2,
        .mtu = 4,
        .tclass = 0x0a,
        .pkey = 0xffff,
        .rate_selector = 2,
        .rate = 3,
        .pkt_life_selector = 2,
        .pkt_life = 18,
        .sl = 5,
        .flow_label = 0xabcde,
        .hop_limit = 0x40,
        .scope = 2,
        .join_state = 1,
        .proxy_join = 1,
    };
    return r;
}

static const uint8_t sample_record_bytes[RDPS_SA_MCMEMBER_RECORD_SIZE] = {
    /*  0 MGID      */ 0xff,
    0x12,
    0x40,
    0x1b,
    0xff,
    0xff,
    0x00,
    0x00,
    /*  8           */ 0x00,
    0x00,
    0x00,
    0x00,
    0xff,
    0xff,
    0xff,
    0xff,
    /* 16 PortGID   */ 0xfe,
    0x80,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    0x00,
    /* 24           */ 0x00,
    0x02,
    0xc9,
    0x03,
    0x00,
    0x01,
    0x23,
    0x45,
    /* 32 Q_Key     */ 0x01,
    0x23,
    0x45,
    0x67,
    /* 36 MLID      */ 0xc0,
    0x01,
    /* 38 MTUSelector:2=2 | MTU:6=4  */ 0x84,
    /* 39 TClass    */ 0x0a,
    /* 40 P_Key     */ 0xff,
    0xff,
    /* 42 RateSelector:2=2 | Rate:6=3 */ 0x83,
    /* 43 PacketLifeTimeSelector:2=2 | PacketLifeTime:6=18 */ 0x92,
    /* 44 SL:4=5 | FlowLabel:20=0xabcde | HopLimit:8=0x40 */ 0x5a,
    0xbc,
    0xde,
    0x40,
    /* 48 Scope:4=2 | JoinState:4=1 */ 0x21,
    /* 49 ProxyJoin:1=1 | reserved:7 */ 0x80,
    /* 50 reserved  */ 0x00,
    0x00,
};

static void test_mcmember_encode_bytes(void **state)
{
    struct rdps_sa_mcmember r = sample_record();
    uint8_t out[RDPS_SA_MCMEMBER_RECORD_SIZE + 4];
    (void)state;

    memset(out, 0xee, sizeof(out));
    rdps__sa_mcmember_encode(out, &r);
    assert_memory_equal(out, sample_record_bytes, sizeof(sample_record_bytes));
    /* Nothing past the 52-byte record is written. */
    for (size_t i = RDPS_SA_MCMEMBER_RECORD_SIZE; i < sizeof(out); i++)
        assert_int_equal(out[i], 0xee);
}

static void test_mcmember_decode_fields(void **state)
{
    struct rdps_sa_mcmember want = sample_record();
    struct rdps_sa_mcmember got;
    (void)state;

    memset(&got, 0x55, sizeof(got));
    rdps__sa_mcmember_decode(sample_record_bytes, &got);
    assert_memory_equal(got.mgid, want.mgid, 16);
    assert_memory_equal(got.port_gid, want.port_gid, 16);
    assert_int_equal(got.qkey, 0x01234567);
    assert_int_equal(got.mlid, 0xc001);
    assert_int_equal(got.mtu_selector, 2);
    assert_int_equal(got.mtu, 4);
    assert_int_equal(got.tclass, 0x0a);
    assert_int_equal(got.pkey, 0xffff);
    assert_int_equal(got.rate_selector, 2);
    assert_int_equal(got.rate, 3);
    assert_int_equal(got.pkt_life_selector, 2);
    assert_int_equal(got.pkt_life, 18);
    assert_int_equal(got.sl, 5);
    assert_int_equal(got.flow_label, 0xabcde);
    assert_int_equal(got.hop_limit, 0x40);
    assert_int_equal(got.scope, 2);
    assert_int_equal(got.join_state, 1);
    assert_int_equal(got.proxy_join, 1);
}

static void test_mcmember_oversized_fields_are_masked(void **state)
{
    struct rdps_sa_mcmember r;
    uint8_t out[RDPS_SA_MCMEMBER_RECORD_SIZE];
    (void)state;

    memset(&r, 0, sizeof(r));
    r.mtu_selector = 0xff; /* only 2 bits */
    r.mtu = 0xff;          /* only 6 bits */
    r.sl = 0xff;
    r.flow_label = 0xffffffff;
    r.hop_limit = 0x00;
    r.scope = 0xff;
    r.join_state = 0x00;
    r.proxy_join = 0xff;
    rdps__sa_mcmember_encode(out, &r);
    assert_int_equal(out[38], 0xff);
    assert_int_equal(out[39], 0x00); /* TClass untouched by the MTU byte */
    /* SL:4 | FlowLabel:20 | HopLimit:8=0: the hop byte stays 0. */
    assert_int_equal(out[44], 0xff);
    assert_int_equal(out[45], 0xff);
    assert_int_equal(out[46], 0xff);
    assert_int_equal(out[47], 0x00);
    assert_int_equal(out[48], 0xf0); /* JoinState nibble stays 0 */
    assert_int_equal(out[49], 0x80); /* reserved bits stay 0 */
    assert_int_equal(out[50], 0x00);
    assert_int_equal(out[51], 0x00);
}

/* The request rdps-info sends: SubnAdmGetTable(MCMemberRecord) matching MGID + JoinState. */
static void test_query_encode_bytes(void **state)
{
    static const uint8_t want_hdr[RDPS_SA_DATA_OFFSET] = {
        /*  0 BaseVersion, MgmtClass=SubnAdm, ClassVersion=2, R:1=0|Method=GetTable */
        0x01,
        0x03,
        0x02,
        0x12,
        /*  4 Status */ 0x00,
        0x00,
        /*  6 ClassSpecific */ 0x00,
        0x00,
        /*  8 TransactionID */ 0x00,
        0x00,
        0x00,
        0x01,
        0x00,
        0x00,
        0x00,
        0x02,
        /* 16 AttributeID = MCMemberRecord */ 0x00,
        0x38,
        /* 18 Reserved */ 0x00,
        0x00,
        /* 20 AttributeModifier */ 0x00,
        0x00,
        0x00,
        0x00,
        /* 24 RMPPVersion=1, RMPPType=0, RRespTime:5|RMPPFlags:3, RMPPStatus */
        0x01,
        0x00,
        0x00,
        0x00,
        /* 28 Data1 (SegmentNumber) */ 0x00,
        0x00,
        0x00,
        0x00,
        /* 32 Data2 (PayloadLength) */ 0x00,
        0x00,
        0x00,
        0x00,
        /* 36 SM_Key */ 0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        /* 44 AttributeOffset = 56/8 words */ 0x00,
        0x07,
        /* 46 Reserved */ 0x00,
        0x00,
        /* 48 ComponentMask = MGID(bit 0) | JoinState(bit 16) */
        0x00,
        0x00,
        0x00,
        0x00,
        0x00,
        0x01,
        0x00,
        0x01,
    };
    struct rdps_sa_mcmember r = sample_record();
    uint8_t out[300];
    (void)state;

    memset(out, 0xee, sizeof(out));
    int n = rdps__sa_mcmember_query_encode(out, sizeof(out), 0x0000000100000002ull, &r,
                                           RDPS_SA_MCM_COMP_MGID | RDPS_SA_MCM_COMP_JOIN_STATE);
    assert_int_equal(n, 256);
    assert_memory_equal(out, want_hdr, sizeof(want_hdr));
    /* 56 MCMemberRecord (template) */
    assert_memory_equal(out + 56, sample_record_bytes, sizeof(sample_record_bytes));
    /* 108..255 zero padding, and nothing written past 256 */
    for (size_t i = 56 + RDPS_SA_MCMEMBER_RECORD_SIZE; i < 256; i++)
        assert_int_equal(out[i], 0);
    for (size_t i = 256; i < sizeof(out); i++)
        assert_int_equal(out[i], 0xee);
}

static void test_query_encode_rejects_bad_args(void **state)
{
    uint8_t out[256];
    struct rdps_sa_mcmember r = sample_record();
    (void)state;

    assert_int_equal(rdps__sa_mcmember_query_encode(out, 255, 1, &r, 1), RDPS_ENOSPC);
    assert_int_equal(rdps__sa_mcmember_query_encode(out, 256, 1, NULL, 1), RDPS_EINVAL);
    assert_int_equal(rdps__sa_mcmember_query_encode(out, 256, 1, &r, 1ull << 18), RDPS_EINVAL);
    assert_int_equal(rdps__sa_mcmember_query_encode(NULL, 256, 1, &r, 1), RDPS_EINVAL);
    /* No template and no mask lists every group. */
    assert_int_equal(rdps__sa_mcmember_query_encode(out, 256, 1, NULL, 0), 256);
    for (size_t i = 56; i < 256; i++)
        assert_int_equal(out[i], 0);
}

/* The codec agrees with the struct layouts libibumad ships (a second, independent source). */
static void test_layout_matches_umad_headers(void **state)
{
    (void)state;
    assert_int_equal(offsetof(struct umad_sa_packet, rmpp_hdr), RDPS_SA_RMPP_HDR_OFFSET);
    assert_int_equal(offsetof(struct umad_sa_packet, sm_key), RDPS_SA_HDR_OFFSET);
    assert_int_equal(offsetof(struct umad_sa_packet, data), RDPS_SA_DATA_OFFSET);
    assert_int_equal(sizeof(struct umad_sa_packet), RDPS_MAD_SIZE);
    assert_int_equal(offsetof(struct umad_sa_mcmember_record, qkey), 32);
    assert_int_equal(offsetof(struct umad_sa_mcmember_record, mlid), 36);
    assert_int_equal(offsetof(struct umad_sa_mcmember_record, pkey), 40);
    assert_int_equal(offsetof(struct umad_sa_mcmember_record, sl_flow_hop), 44);
    assert_int_equal(offsetof(struct umad_sa_mcmember_record, scope_state), 48);
    assert_int_equal(sizeof(struct umad_sa_mcmember_record), RDPS_SA_MCMEMBER_RECORD_STRIDE);
    assert_int_equal(UMAD_SA_MCM_COMP_MASK_JOIN_STATE, RDPS_SA_MCM_COMP_JOIN_STATE);
    assert_int_equal(UMAD_SA_MCM_COMP_MASK_PROXY_JOIN, RDPS_SA_MCM_COMP_PROXY_JOIN);
    assert_int_equal(UMAD_SA_ATTR_MCMEMBER_REC, RDPS_SA_ATTR_MCMEMBER_RECORD);
}

/*
 * A GetTableResp as the kernel hands it over after RMPP reassembly: header,
 * then `nrec` records at a 56-byte stride; `len` is what umad_recv reported.
 */
static size_t build_table_response(uint8_t *buf, size_t cap, unsigned nrec, uint32_t paylen)
{
    static const uint8_t hdr[RDPS_SA_DATA_OFFSET] = {
        /*  0 */ 0x01,
        0x03,
        0x02,
        0x92, /* Method = GetTableResp (0x80 | 0x12) */
        /*  4 Status */ 0x00,
        0x00,
        /*  6 */ 0x00,
        0x00,
        /*  8 TID: kernel agent in the high half, ours in the low half */
        0x00,
        0x00,
        0x2a,
        0x17,
        0x00,
        0x00,
        0x00,
        0x02,
        /* 16 */ 0x00,
        0x38,
        0x00,
        0x00,
        /* 20 */ 0x00,
        0x00,
        0x00,
        0x00,
        /* 24 RMPP v1, type DATA(1), RRespTime 0 | flags active+first+last (0x07), status */
        0x01,
        0x01,
        0x07,
        0x00,
        /* 28 SegmentNumber 1 */ 0x00,
        0x00,
        0x00,
        0x01,
        /* 32 PayloadLength: patched below */ 0x00,
        0x00,
        0x00,
        0x00,
        /* 36 SM_Key */ 0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        /* 44 AttributeOffset 7 words */ 0x00,
        0x07,
        /* 46 */ 0x00,
        0x00,
        /* 48 ComponentMask */ 0,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    };
    memset(buf, 0, cap);
    memcpy(buf, hdr, sizeof(hdr));
    buf[32] = (uint8_t)(paylen >> 24);
    buf[33] = (uint8_t)(paylen >> 16);
    buf[34] = (uint8_t)(paylen >> 8);
    buf[35] = (uint8_t)paylen;
    for (unsigned i = 0; i < nrec; i++) {
        uint8_t *rec = buf + RDPS_SA_DATA_OFFSET + i * RDPS_SA_MCMEMBER_RECORD_STRIDE;
        memcpy(rec, sample_record_bytes, sizeof(sample_record_bytes));
        rec[37] = (uint8_t)(0x01 + i); /* MLID 0xc001, 0xc002, ... */
    }
    return RDPS_SA_DATA_OFFSET + (size_t)nrec * RDPS_SA_MCMEMBER_RECORD_STRIDE;
}

static void test_response_table_decode(void **state)
{
    uint8_t buf[1024];
    struct rdps_sa_mcmember recs[8];
    (void)state;

    /* Three records in one reassembled buffer: PayloadLength = 20 (SA header) + 3 * 56. */
    size_t len = build_table_response(buf, sizeof(buf), 3, 20 + 3 * 56);
    int n = rdps__sa_mcmember_response_decode(buf, len, 0x2ull, recs, 8);
    assert_int_equal(n, 3);
    assert_int_equal(recs[0].mlid, 0xc001);
    assert_int_equal(recs[2].mlid, 0xc003);
    assert_int_equal(recs[1].qkey, 0x01234567);
    assert_int_equal(rdps__ib_mtu_bytes(recs[1].mtu), 2048);

    /* More records than room: the count is still reported, only `max` are stored. */
    memset(recs, 0, sizeof(recs));
    n = rdps__sa_mcmember_response_decode(buf, len, 0x2ull, recs, 1);
    assert_int_equal(n, 3);
    assert_int_equal(recs[0].mlid, 0xc001);
    assert_int_equal(recs[1].mlid, 0);

    /* A full 256-byte MAD whose PayloadLength says one record: padding is not a record. */
    build_table_response(buf, sizeof(buf), 1, 20 + 56);
    n = rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, recs, 8);
    assert_int_equal(n, 1);

    /* Empty table: PayloadLength covers only the SA header. */
    build_table_response(buf, sizeof(buf), 0, 20);
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, recs, 8), 0);

    /* The last record without its 4 bytes of stride padding still counts. */
    build_table_response(buf, sizeof(buf), 2, 20 + 56 + 52);
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 56 + 56 + 52, 0x2ull, recs, 8), 2);
}

static void test_response_without_rmpp_stops_at_padding(void **state)
{
    uint8_t buf[256];
    struct rdps_sa_mcmember recs[4];
    (void)state;

    build_table_response(buf, sizeof(buf), 2, 0);
    buf[26] = 0x00; /* RMPP not active: nothing gives the length */
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, recs, 4), 2);
}

static void test_response_get_resp(void **state)
{
    uint8_t buf[256];
    struct rdps_sa_mcmember rec;
    (void)state;

    build_table_response(buf, sizeof(buf), 1, 0);
    buf[3] = 0x81; /* GetResp */
    buf[26] = 0;
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, &rec, 1), 1);
    assert_int_equal(rec.mlid, 0xc001);
    assert_int_equal(rec.join_state, 1);
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 56 + 51, 0x2ull, &rec, 1),
                     RDPS_EBADFRAME);
}

static void test_response_rejects_malformed(void **state)
{
    uint8_t buf[512];
    uint8_t bad[512];
    struct rdps_sa_mcmember recs[4];
    (void)state;

    size_t len = build_table_response(buf, sizeof(buf), 2, 20 + 2 * 56);
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, len, 0x2ull, recs, 4), 2);

    /* Shorter than the 56-byte header. */
    for (size_t cut = 0; cut < RDPS_SA_DATA_OFFSET; cut += 5)
        assert_int_equal(rdps__sa_mcmember_response_decode(buf, cut, 0x2ull, recs, 4),
                         RDPS_EBADFRAME);
    assert_non_null(strstr(rdps_last_error_message(), "too short"));

    /* Wrong base version, class, class version. */
    static const size_t header_bytes[] = {0, 1, 2};
    for (size_t i = 0; i < 3; i++) {
        memcpy(bad, buf, len);
        bad[header_bytes[i]] ^= 0x40;
        assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4),
                         RDPS_EBADFRAME);
    }
    /* A request, not a response. */
    memcpy(bad, buf, len);
    bad[3] = 0x12;
    assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4), RDPS_EBADFRAME);
    /* Someone else's transaction (low 32 bits differ); the high half is the kernel's. */
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, len, 0x3ull, recs, 4), RDPS_EBADFRAME);
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, len, 0xffff000000000002ull, recs, 4),
                     2);
    /* Another attribute. */
    memcpy(bad, buf, len);
    bad[17] = 0x35;
    assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4), RDPS_EBADFRAME);
    /* AttributeOffset smaller than a record. */
    memcpy(bad, buf, len);
    bad[45] = 0x03;
    assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4), RDPS_EBADFRAME);
    /* AttributeOffset 0 while records are present. */
    memcpy(bad, buf, len);
    bad[45] = 0x00;
    assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4), RDPS_EBADFRAME);
    /* PayloadLength smaller than the SA header itself. */
    memcpy(bad, buf, len);
    bad[35] = 19;
    assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4), RDPS_EBADFRAME);
    /* A PayloadLength claiming more than arrived cannot grow the table. */
    memcpy(bad, buf, len);
    bad[34] = 0x10;
    assert_int_equal(rdps__sa_mcmember_response_decode(bad, len, 0x2ull, recs, 4), 2);
    /* Bad arguments. */
    assert_int_equal(rdps__sa_mcmember_response_decode(NULL, len, 0x2ull, recs, 4), RDPS_EINVAL);
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, len, 0x2ull, NULL, 4), RDPS_EINVAL);
}

static void test_response_error_status(void **state)
{
    uint8_t buf[256];
    struct rdps_sa_mcmember recs[1];
    (void)state;

    build_table_response(buf, sizeof(buf), 0, 20);
    buf[4] = 0x03; /* Status 0x0300: ERR_NO_RECORDS (class-specific code 3) */
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, recs, 1), RDPS_EPROTO);
    assert_non_null(strstr(rdps_last_error_message(), "no records"));
    buf[4] = 0x00;
    buf[5] = 0x01; /* busy */
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, recs, 1), RDPS_EPROTO);
    assert_non_null(strstr(rdps_last_error_message(), "busy"));
    buf[5] = 0x1c; /* invalid field code 7 */
    assert_int_equal(rdps__sa_mcmember_response_decode(buf, 256, 0x2ull, recs, 1), RDPS_EPROTO);
    assert_non_null(strstr(rdps_last_error_message(), "invalid attribute"));
}

static void test_mad_hdr_roundtrip(void **state)
{
    static const uint8_t bytes[RDPS_MAD_HDR_SIZE] = {
        0x01, 0x03, 0x02, 0x81,                         /* version, class, class version, GetResp */
        0x02, 0x00,                                     /* Status = ERR_REQ_INVALID */
        0xbe, 0xef,                                     /* ClassSpecific */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* TID */
        0x00, 0x38, 0x00, 0x00,                         /* AttributeID, reserved */
        0xde, 0xad, 0xbe, 0xef,                         /* AttributeModifier */
    };
    struct rdps_mad_hdr h;
    uint8_t out[RDPS_MAD_HDR_SIZE];
    (void)state;

    rdps__mad_hdr_decode(bytes, &h);
    assert_int_equal(h.method, 0x81);
    assert_int_equal(h.status, 0x0200);
    assert_int_equal(h.class_specific, 0xbeef);
    assert_true(h.tid == 0x0102030405060708ull);
    assert_int_equal(h.attr_id, 0x38);
    assert_int_equal(h.attr_mod, 0xdeadbeef);
    rdps__mad_hdr_encode(out, &h);
    assert_memory_equal(out, bytes, sizeof(bytes));
    assert_string_equal(rdps__sa_status_text(0x0200), "request invalid");
}

static void test_mgid_from_ipv4(void **state)
{
    /* 239.192.10.1 in the default partition, link-local scope, as rdma_cm maps it on IB. */
    static const uint8_t want[16] = {
        0xff, 0x12, /* multicast, flags 1 (transient), scope 2 (link-local) */
        0x40, 0x01, /* IPv4 signature with rdma_cm's byte (IPoIB: 0x401b) */
        0xff, 0xff, /* P_Key */
        0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x0f, 0xc0, 0x0a, 0x01, /* low 28 bits of 239.192.10.1 (0xefc00a01) */
    };
    uint8_t mgid[16];
    (void)state;

    rdps__ib_mgid_from_ipv4(0xefc00a01u, 0xffff, 2, mgid);
    assert_memory_equal(mgid, want, 16);
    rdps__ib_mgid_from_ipv4(0xe0000001u, 0x8001, 5, mgid);
    assert_int_equal(mgid[1], 0x15);
    assert_int_equal(mgid[4], 0x80);
    assert_int_equal(mgid[5], 0x01);
    assert_int_equal(mgid[12], 0x00);
    assert_int_equal(mgid[15], 0x01);
}

static void test_helpers(void **state)
{
    (void)state;
    assert_int_equal(rdps__ib_mtu_bytes(1), 256);
    assert_int_equal(rdps__ib_mtu_bytes(3), 1024);
    assert_int_equal(rdps__ib_mtu_bytes(5), 4096);
    assert_int_equal(rdps__ib_mtu_bytes(0), 0);
    assert_int_equal(rdps__ib_mtu_bytes(6), 0);
    assert_string_equal(rdps__ib_rate_text(3), "10 Gb/s");
    assert_string_equal(rdps__ib_rate_text(16), "100 Gb/s");
    assert_string_equal(rdps__ib_rate_text(0), "unknown");
    assert_string_equal(rdps__ib_rate_text(63), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mcmember_encode_bytes),
        cmocka_unit_test(test_mcmember_decode_fields),
        cmocka_unit_test(test_mcmember_oversized_fields_are_masked),
        cmocka_unit_test(test_query_encode_bytes),
        cmocka_unit_test(test_query_encode_rejects_bad_args),
        cmocka_unit_test(test_layout_matches_umad_headers),
        cmocka_unit_test(test_response_table_decode),
        cmocka_unit_test(test_response_without_rmpp_stops_at_padding),
        cmocka_unit_test(test_response_get_resp),
        cmocka_unit_test(test_response_rejects_malformed),
        cmocka_unit_test(test_response_error_status),
        cmocka_unit_test(test_mad_hdr_roundtrip),
        cmocka_unit_test(test_mgid_from_ipv4),
        cmocka_unit_test(test_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
