/* SPDX-License-Identifier: BSD-2-Clause */
/* rdps_sa_mad.h - pure encode/decode of Subnet Administration MADs (MAD header, SA header,
 * MCMemberRecord). */
#ifndef RDPS_SA_MAD_H
#define RDPS_SA_MAD_H

#include <stddef.h>
#include <stdint.h>

/*
 * Layouts from the InfiniBand Architecture Specification vol. 1: MAD common
 * header (13.4.3), RMPP header (13.6.2.1), SA header (15.2.1.1) and
 * MCMemberRecord (15.2.5.17). Every multi-byte field on the wire is
 * big-endian; nothing here touches a device.
 */
enum {
    RDPS_MAD_SIZE = 256,
    RDPS_MAD_HDR_SIZE = 24,
    RDPS_SA_RMPP_HDR_OFFSET = 24,
    RDPS_SA_HDR_OFFSET = 36,  /* SM_Key, AttributeOffset, ComponentMask */
    RDPS_SA_DATA_OFFSET = 56, /* first attribute record */
    RDPS_SA_DATA_SIZE = 200,  /* data bytes in one 256-byte MAD */
    RDPS_SA_MCMEMBER_RECORD_SIZE = 52,
    RDPS_SA_MCMEMBER_RECORD_STRIDE = 56, /* records in a table are padded to 8 bytes */
};

enum {
    RDPS_MAD_BASE_VERSION = 1,
    RDPS_MAD_CLASS_SUBN_ADM = 0x03,
    RDPS_MAD_SA_CLASS_VERSION = 2,
    RDPS_MAD_METHOD_GET = 0x01,
    RDPS_MAD_METHOD_GET_TABLE = 0x12,
    RDPS_MAD_METHOD_RESPONSE_BIT = 0x80,
    RDPS_MAD_METHOD_GET_RESP = 0x81,
    RDPS_MAD_METHOD_GET_TABLE_RESP = 0x92,
    RDPS_SA_ATTR_MCMEMBER_RECORD = 0x0038,
    RDPS_MAD_RMPP_VERSION = 1,
    RDPS_MAD_RMPP_FLAG_ACTIVE = 0x01,
};

/* MCMemberRecord component-mask bits (IBA table 213). */
enum {
    RDPS_SA_MCM_COMP_MGID = 1u << 0,
    RDPS_SA_MCM_COMP_PORT_GID = 1u << 1,
    RDPS_SA_MCM_COMP_QKEY = 1u << 2,
    RDPS_SA_MCM_COMP_MLID = 1u << 3,
    RDPS_SA_MCM_COMP_MTU_SELECTOR = 1u << 4,
    RDPS_SA_MCM_COMP_MTU = 1u << 5,
    RDPS_SA_MCM_COMP_TCLASS = 1u << 6,
    RDPS_SA_MCM_COMP_PKEY = 1u << 7,
    RDPS_SA_MCM_COMP_RATE_SELECTOR = 1u << 8,
    RDPS_SA_MCM_COMP_RATE = 1u << 9,
    RDPS_SA_MCM_COMP_PKT_LIFE_SELECTOR = 1u << 10,
    RDPS_SA_MCM_COMP_PKT_LIFE = 1u << 11,
    RDPS_SA_MCM_COMP_SL = 1u << 12,
    RDPS_SA_MCM_COMP_FLOW_LABEL = 1u << 13,
    RDPS_SA_MCM_COMP_HOP_LIMIT = 1u << 14,
    RDPS_SA_MCM_COMP_SCOPE = 1u << 15,
    RDPS_SA_MCM_COMP_JOIN_STATE = 1u << 16,
    RDPS_SA_MCM_COMP_PROXY_JOIN = 1u << 17,
};

/* The 24-byte header common to every MAD. */
struct rdps_mad_hdr {
    uint8_t base_version;
    uint8_t mgmt_class;
    uint8_t class_version;
    uint8_t method; /* includes the response bit (0x80) */
    uint16_t status;
    uint16_t class_specific;
    uint64_t tid;
    uint16_t attr_id;
    uint32_t attr_mod;
};

/* RMPP header + SA header (bytes 24..55 of an SA MAD). */
struct rdps_sa_hdr {
    uint8_t rmpp_version;
    uint8_t rmpp_type;
    uint8_t rmpp_resp_time; /* 5 bits */
    uint8_t rmpp_flags;     /* 3 bits: active, first, last */
    uint8_t rmpp_status;
    uint32_t rmpp_data1; /* segment number */
    uint32_t rmpp_data2; /* payload length / new window */
    uint64_t sm_key;
    uint16_t attr_offset; /* record stride in 8-byte words */
    uint64_t comp_mask;
};

/* One MCMemberRecord, fields unpacked. */
struct rdps_sa_mcmember {
    uint8_t mgid[16];
    uint8_t port_gid[16];
    uint32_t qkey;
    uint16_t mlid;
    uint8_t mtu_selector; /* 2 bits */
    uint8_t mtu;          /* 6 bits, IBV_MTU_* encoding (1=256 .. 5=4096) */
    uint8_t tclass;
    uint16_t pkey;
    uint8_t rate_selector; /* 2 bits */
    uint8_t rate;          /* 6 bits, IBA rate encoding */
    uint8_t pkt_life_selector;
    uint8_t pkt_life;
    uint8_t sl;          /* 4 bits */
    uint32_t flow_label; /* 20 bits */
    uint8_t hop_limit;
    uint8_t scope;      /* 4 bits */
    uint8_t join_state; /* 4 bits: full, non, send-only non, send-only full */
    uint8_t proxy_join; /* 1 bit */
};

void rdps__mad_hdr_encode(uint8_t out[RDPS_MAD_HDR_SIZE], const struct rdps_mad_hdr *hdr);
void rdps__mad_hdr_decode(const uint8_t in[RDPS_MAD_HDR_SIZE], struct rdps_mad_hdr *hdr);
void rdps__sa_hdr_encode(uint8_t out[RDPS_SA_DATA_OFFSET - RDPS_SA_RMPP_HDR_OFFSET],
                         const struct rdps_sa_hdr *hdr);
void rdps__sa_hdr_decode(const uint8_t in[RDPS_SA_DATA_OFFSET - RDPS_SA_RMPP_HDR_OFFSET],
                         struct rdps_sa_hdr *hdr);
/* Fields wider than their wire bits are masked, never spill into neighbours. */
void rdps__sa_mcmember_encode(uint8_t out[RDPS_SA_MCMEMBER_RECORD_SIZE],
                              const struct rdps_sa_mcmember *rec);
void rdps__sa_mcmember_decode(const uint8_t in[RDPS_SA_MCMEMBER_RECORD_SIZE],
                              struct rdps_sa_mcmember *rec);

/*
 * Builds a 256-byte SubnAdmGetTable(MCMemberRecord) request into `out`
 * (capacity `cap`); `match` supplies the fields named in `comp_mask` (NULL
 * with mask 0 lists every group). Returns RDPS_MAD_SIZE or RDPS_EINVAL /
 * RDPS_ENOSPC.
 */
int rdps__sa_mcmember_query_encode(uint8_t *out, size_t cap, uint64_t tid,
                                   const struct rdps_sa_mcmember *match, uint64_t comp_mask);

/*
 * Validates an SA response to a query with transaction id `tid` (only the low
 * 32 bits are compared: the kernel's MAD layer owns the high half) and
 * unpacks up to `max` MCMemberRecords into `out`. A response may be longer
 * than 256 bytes when the kernel reassembled an RMPP transfer. Returns the
 * number of records in the response (which may exceed max; only max are
 * stored), RDPS_EBADFRAME for a short or malformed MAD, or RDPS_EPROTO when
 * the SA answered with an error status; a detail message names the problem.
 */
int rdps__sa_mcmember_response_decode(const uint8_t *in, size_t len, uint64_t tid,
                                      struct rdps_sa_mcmember *out, size_t max);

/* Text for the MAD status field (common bits and SA class-specific code). */
const char *rdps__sa_status_text(uint16_t status);
/* 1..5 -> 256..4096, else 0. */
unsigned rdps__ib_mtu_bytes(uint8_t mtu);
/* IBA static-rate encoding -> text such as "100 Gb/s" ("unknown" otherwise). */
const char *rdps__ib_rate_text(uint8_t rate);

/*
 * The MGID rdma_cm uses for an IPv4 group in RDMA_PS_UDP on IB:
 * ff1<scope>:4001:<pkey>::<low 28 bits of the address> (the IPoIB mapping with
 * rdma_cm's signature byte); scope 2 (link-local) is IPoIB's default.
 */
void rdps__ib_mgid_from_ipv4(uint32_t ipv4_host_order, uint16_t pkey, uint8_t scope,
                             uint8_t mgid[16]);

#endif /* RDPS_SA_MAD_H */
