/* SPDX-License-Identifier: BSD-2-Clause */
/* config.c - rdps_config defaults and validation, counter names. */
#include "ctx_internal.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "abi.h"
#include "discovery_engine.h"
#include "rdps_error.h"

void rdps__config_defaults(rdps_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->qkey = 0x01234567u;
    cfg->group_range = "239.192.0.0/16";
    cfg->control_group = "239.192.0.1";
    cfg->max_message_size = 16u * 1024 * 1024;
    cfg->reassembly_memory = 64u * 1024 * 1024;
    cfg->reassembly_timeout_ms = 2000;
    cfg->max_sessions = 1024;
    cfg->max_sessions_per_source = 64;
    /* A reliable stream parks every message completed above a hole, and its window offers only
     * what it could park: a slot per datagram of its 2048-sequence window, so that the
     * publisher goes on past a hole while the repair comes (with a slot per datagram of only the
     * 1023 credits, a hole stopped it after one credit window: 5-6 % less rate at 1 and 5 %
     * loss on rxe). With 512 the window of single-datagram messages was half the credits, and
     * flow control, not the receiver, set the lossless rate on rxe. A parked small message holds
     * a 16 KiB chunk: 32 MiB per source parks 2048 of them. The tables are calloc'ed: untouched
     * slots cost no resident memory. */
    cfg->max_partials = 4096;
    cfg->max_partials_per_source = 2048;
    cfg->reassembly_memory_per_source = 32u * 1024 * 1024;
    cfg->announce_interval_ms = 1000;
    cfg->max_peers = RDPS_DISCOVERY_DEFAULT_MAX_PEERS;
    cfg->max_remote_only_peers = RDPS_DISCOVERY_DEFAULT_MAX_REMOTE_ONLY;
    cfg->peer_interval_min_ms = RDPS_DISCOVERY_DEFAULT_MIN_INTERVAL_MS;
    cfg->peer_interval_max_ms = RDPS_DISCOVERY_DEFAULT_MAX_INTERVAL_MS;
    cfg->send_slots = 1024;
    cfg->recv_slots = 4096;
    cfg->loss_seed = 1;
    cfg->replay_senders = 1024;
    cfg->max_contacts = 256;
    cfg->multicast_timeout_ms = 3000;
    cfg->max_unicast_subscribers = 256;
    cfg->parity_blocks = 0;
    cfg->replay_max_age_ms = 30000;
    cfg->unicast_subscribers_per_host = 4;
}

void rdps__config_zero_defaults(rdps_config *cfg)
{
    rdps_config d;
    rdps__config_defaults(&d);
#define KEEP_DEFAULT_(field) \
    if (cfg->field == 0)     \
        cfg->field = d.field;
    KEEP_DEFAULT_(qkey)
    KEEP_DEFAULT_(group_range)
    KEEP_DEFAULT_(control_group)
    KEEP_DEFAULT_(max_message_size)
    KEEP_DEFAULT_(reassembly_memory)
    KEEP_DEFAULT_(reassembly_timeout_ms)
    KEEP_DEFAULT_(max_sessions)
    KEEP_DEFAULT_(max_sessions_per_source)
    KEEP_DEFAULT_(max_partials)
    KEEP_DEFAULT_(max_partials_per_source)
    KEEP_DEFAULT_(reassembly_memory_per_source)
    KEEP_DEFAULT_(announce_interval_ms)
    KEEP_DEFAULT_(max_peers)
    KEEP_DEFAULT_(max_remote_only_peers)
    KEEP_DEFAULT_(peer_interval_min_ms)
    KEEP_DEFAULT_(peer_interval_max_ms)
    KEEP_DEFAULT_(send_slots)
    KEEP_DEFAULT_(recv_slots)
    KEEP_DEFAULT_(replay_senders)
    KEEP_DEFAULT_(max_contacts)
    KEEP_DEFAULT_(multicast_timeout_ms)
    KEEP_DEFAULT_(max_unicast_subscribers)
    KEEP_DEFAULT_(replay_max_age_ms)
    KEEP_DEFAULT_(unicast_subscribers_per_host)
#undef KEEP_DEFAULT_
    /* Zero is a value of its own, documented in rdps.h: port_num, cm_port (the defaults), the
     * loss generator's rates, frame types and seed (0 is a seed like any other), stats_off,
     * domain_key_id (1), encrypt, parity_blocks (none), and the NULL strings and key. */
}

void rdps_config_init_sized(rdps_config *cfg, size_t size)
{
    rdps_config defaults;
    if (cfg == NULL)
        return;
    rdps__config_defaults(&defaults);
    rdps__abi_write_out(cfg, size, &defaults, sizeof(defaults));
}

static int check_range(const char *field, uint64_t value, uint64_t lo, uint64_t hi)
{
    if (value < lo || value > hi)
        return rdps__set_err(RDPS_EINVAL,
                             "config %s = %" PRIu64 " is outside %" PRIu64 "..%" PRIu64, field,
                             value, lo, hi);
    return 0;
}

static int check_probability(const char *field, double value)
{
    if (!(value >= 0.0 && value <= 1.0))
        return rdps__set_err(RDPS_EINVAL, "config %s = %g is outside [0, 1]", field, value);
    return 0;
}

int rdps__config_validate(const rdps_config *cfg, struct rdps_group_range *range,
                          uint32_t *control_group)
{
    int rc;
    if (cfg == NULL)
        return rdps__set_err(RDPS_EINVAL, "config is NULL (use rdps_config_init)");
    if (cfg->bind_ip != NULL) {
        struct in_addr in;
        if (inet_pton(AF_INET, cfg->bind_ip, &in) != 1)
            return rdps__set_err(RDPS_EINVAL, "bind_ip '%s' is not a dotted IPv4 address",
                                 cfg->bind_ip);
    }
    if (cfg->device != NULL && (cfg->device[0] == '\0' || strlen(cfg->device) >= 64))
        return rdps__set_err(RDPS_EINVAL, "device name must be 1..63 characters");
    if (rdps__group_range_parse(cfg->group_range, range) != 0)
        return rdps__prepend_err(RDPS_EINVAL, "config group_range: ");
    if (rdps__mcast_addr_parse(cfg->control_group, control_group) != 0)
        return rdps__prepend_err(RDPS_EINVAL, "config control_group: ");
    if ((rc = check_range("max_message_size", cfg->max_message_size, 1, 0xffffffffu)) < 0 ||
        (rc = check_range("reassembly_memory", cfg->reassembly_memory, 64 * 1024, SIZE_MAX)) < 0 ||
        (rc = check_range("reassembly_timeout_ms", cfg->reassembly_timeout_ms, 1, 3600000)) < 0 ||
        (rc = check_range("max_sessions", cfg->max_sessions, 1, 1u << 20)) < 0 ||
        (rc = check_range("max_sessions_per_source", cfg->max_sessions_per_source, 1, UINT32_MAX)) <
            0 ||
        (rc = check_range("max_partials", cfg->max_partials, 1, 1u << 16)) < 0 ||
        (rc = check_range("max_partials_per_source", cfg->max_partials_per_source, 1, UINT32_MAX)) <
            0 ||
        (rc = check_range("reassembly_memory_per_source", cfg->reassembly_memory_per_source,
                          64 * 1024, SIZE_MAX)) < 0 ||
        (rc = check_range("announce_interval_ms", cfg->announce_interval_ms, 10, 600000)) < 0 ||
        (rc = check_range("max_peers", cfg->max_peers, 2, 1u << 20)) < 0 ||
        (rc = check_range("max_remote_only_peers", cfg->max_remote_only_peers, 1,
                          cfg->max_peers - 1)) < 0 ||
        (rc = check_range("peer_interval_min_ms", cfg->peer_interval_min_ms, 1, 600000)) < 0 ||
        (rc = check_range("peer_interval_max_ms", cfg->peer_interval_max_ms,
                          cfg->peer_interval_min_ms, 600000)) < 0 ||
        (rc = check_range("send_slots", cfg->send_slots, 16, 65536)) < 0 ||
        (rc = check_range("recv_slots", cfg->recv_slots, 16, 65536)) < 0 ||
        (rc = check_probability("loss_rx_rate", cfg->loss_rx_rate)) < 0 ||
        (rc = check_probability("loss_tx_rate", cfg->loss_tx_rate)) < 0 ||
        (rc = check_range("domain_key_id", cfg->domain_key_id, 0, RDPS_DOMAIN_KEY_ID_MAX)) < 0 ||
        (rc = check_range("replay_senders", cfg->replay_senders, 16, 1u << 20)) < 0 ||
        (rc = check_range("encrypt", (uint64_t)(unsigned)cfg->encrypt, 0, 1)) < 0 ||
        (rc = check_range("max_contacts", cfg->max_contacts, 16, 4096)) < 0 ||
        (rc = check_range("multicast_timeout_ms", cfg->multicast_timeout_ms, 10, 600000)) < 0 ||
        (rc = check_range("max_unicast_subscribers", cfg->max_unicast_subscribers, 1, 4096)) < 0 ||
        (rc = check_range("parity_blocks", cfg->parity_blocks, 0, 4096)) < 0 ||
        (rc = check_range("replay_max_age_ms", cfg->replay_max_age_ms, 2000, 3600000)) < 0 ||
        (rc = check_range("unicast_subscribers_per_host", cfg->unicast_subscribers_per_host, 1,
                          4096)) < 0)
        return rc;
    if (cfg->loss_frame_types & ~0x7eu) /* DATA .. PARITY */
        return rdps__set_err(RDPS_EINVAL,
                             "config loss_frame_types 0x%x has bits for unknown frame types",
                             cfg->loss_frame_types);
    return 0;
}

static const char *const counter_names[] = {
#define RDPS_COUNTER_NAME_(name, text) #name,
    RDPS_COUNTER_MAP(RDPS_COUNTER_NAME_)
#undef RDPS_COUNTER_NAME_
};

static const char *const counter_texts[] = {
#define RDPS_COUNTER_TEXT_(name, text) text,
    RDPS_COUNTER_MAP(RDPS_COUNTER_TEXT_)
#undef RDPS_COUNTER_TEXT_
};

size_t rdps_counter_count(void)
{
    return sizeof(counter_names) / sizeof(counter_names[0]);
}

const char *rdps_counter_name(size_t index)
{
    return index < rdps_counter_count() ? counter_names[index] : NULL;
}

const char *rdps_counter_description(size_t index)
{
    return index < rdps_counter_count() ? counter_texts[index] : NULL;
}
