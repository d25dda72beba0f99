/* addr.c - rdma_cm unicast resolution (SIDR) and multicast joins onto the transport's shared UD QP.
 */
#include "rdps_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdps_addr_table.h"
#include "rdps_error.h"
#include "rdps_log.h"
#include "rdps_verbs_transport.h"

#define MCAST_QPN    0xffffffu
#define LISTEN_DEPTH 64
#define ADDR_TEXT    (INET6_ADDRSTRLEN + 16)

/* What an rdma_cm id's context points at, so one handler can route every event. */
enum cm_owner_kind { CM_OWNER_LISTENER = 1, CM_OWNER_PEER = 2, CM_OWNER_GROUP = 3 };

struct cm_owner {
    enum cm_owner_kind kind;
    void *object;
};

/* Address handles replaced by a re-resolve: sends posted earlier may still use them. */
struct retired_ah {
    struct retired_ah *next;
    struct ibv_ah *ah;
};

struct rdps_addr_peer {
    struct rdps_addr_entry entry; /* first: the table hands entries back */
    char name[ADDR_TEXT];         /* "ip:port", for messages */
    struct rdps_addr *owner;
    struct cm_owner cm;
    struct rdma_cm_id *id;
    struct ibv_ah *ah;
    struct retired_ah *retired;
    struct rdps_dest dest;
};

struct rdps_addr_group {
    struct rdps_addr_entry entry; /* first */
    char name[ADDR_TEXT];         /* group address, for messages */
    struct rdps_addr *owner;
    struct cm_owner cm;
    struct rdma_cm_id *id;
    enum rdps_join_mode mode;
    bool use_full_join; /* SEND_ONLY refused by the device: joined as a full member */
    bool join_issued;   /* the id holds a join that must be left before it is destroyed */
    bool attached;
    union ibv_gid mgid;
    uint16_t mlid;
    uint32_t qkey;
    struct ibv_ah *ah;
    struct retired_ah *retired;
    struct rdps_dest dest;
};

struct rdps_addr {
    struct rdps_transport *transport;
    struct rdps_verbs_info info;
    struct rdma_event_channel *channel;
    struct rdma_cm_id *listen_id;
    struct cm_owner listen_owner;
    uint16_t listen_port;
    struct sockaddr_storage local;
    bool has_local;
    uint32_t timeout_ms;
    struct rdps_addr_table peers;
    struct rdps_addr_table groups;
    struct rdps_addr_stats stats;
    uint64_t last_tick_ms;
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static socklen_t sockaddr_size(const struct sockaddr *sa)
{
    return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons(port);
}

static const char *device_name_of(const struct ibv_context *verbs)
{
    return verbs != NULL ? ibv_get_device_name(verbs->device) : "(none)";
}

/* rdma_cm opens its own device contexts; the same device is recognized by name. */
static bool same_device(const struct rdps_addr *a, const struct rdma_cm_id *id)
{
    return id->verbs != NULL &&
           strcmp(ibv_get_device_name(id->verbs->device), device_name_of(a->info.verbs)) == 0 &&
           id->port_num == a->info.port_num;
}

static void retire_ah(struct retired_ah **list, struct ibv_ah **ah)
{
    if (*ah == NULL)
        return;
    struct retired_ah *r = malloc(sizeof(*r));
    if (r == NULL) {
        /* Better a leaked AH than one destroyed under a posted send. */
        RDPS_LOG_WRN("addr: out of memory retiring an address handle; it is leaked");
        *ah = NULL;
        return;
    }
    r->ah = *ah;
    r->next = *list;
    *list = r;
    *ah = NULL;
}

static void destroy_ahs(struct retired_ah **list, struct ibv_ah **ah)
{
    if (*ah != NULL)
        ibv_destroy_ah(*ah);
    *ah = NULL;
    while (*list != NULL) {
        struct retired_ah *r = *list;
        *list = r->next;
        ibv_destroy_ah(r->ah);
        free(r);
    }
}

static void destroy_id(struct rdma_cm_id **id)
{
    if (*id != NULL)
        rdma_destroy_id(*id);
    *id = NULL;
}

/* ---- unicast peers ---------------------------------------------------------------------- */

static void peer_fail(struct rdps_addr_peer *p, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void peer_fail(struct rdps_addr_peer *p, int err, const char *fmt, ...)
{
    char text[sizeof(p->entry.error_text)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (p->entry.state == RDPS_ENTRY_PENDING)
        p->owner->stats.resolves_failed++;
    rdps__addr_entry_set_failed(&p->entry, err, "%s", text);
    RDPS_LOG_INF("addr: %s", p->entry.error_text);
}

static int peer_start(struct rdps_addr_peer *p)
{
    struct rdps_addr *a = p->owner;
    struct sockaddr_storage src;
    char name[ADDR_TEXT];
    int err;

    rdps__addr_key_format(&p->entry.key, name, sizeof(name));
    destroy_id(&p->id);
    rdps__addr_entry_start(&p->entry, now_ms() + a->timeout_ms);
    a->stats.resolves_started++;
    if (rdma_create_id(a->channel, &p->id, &p->cm, RDMA_PS_UDP) != 0) {
        err = rdps__errno_code(errno);
        p->id = NULL;
        peer_fail(p, err, "resolve %s: rdma_create_id: %s", p->name, strerror(errno));
        return rdps__set_err(err, "%s", p->entry.error_text);
    }
    memcpy(&src, &a->local, sizeof(src));
    set_port(&src, 0);
    if (rdma_resolve_addr(p->id, a->has_local ? (struct sockaddr *)&src : NULL,
                          (struct sockaddr *)&p->entry.key.addr, (int)a->timeout_ms) != 0) {
        int saved = errno;
        err = rdps__errno_code(saved);
        if (err == RDPS_ENETUNREACH || err == RDPS_EADDRNOTAVAIL || err == RDPS_ENODEV)
            peer_fail(p, RDPS_EHOSTUNREACH, "resolve %s: host unreachable (rdma_resolve_addr: %s)",
                      p->name, strerror(saved));
        else
            peer_fail(p, err, "resolve %s: rdma_resolve_addr: %s", p->name, strerror(saved));
        destroy_id(&p->id);
        return rdps__set_err(p->entry.error, "%s", p->entry.error_text);
    }
    RDPS_LOG_DBG("addr: resolving %s", name);
    return 0;
}

int rdps__addr_resolve_start(struct rdps_addr *a, const struct sockaddr *peer,
                             struct rdps_addr_peer **out)
{
    struct rdps_addr_key key;
    bool must_start;
    int err;

    if (out != NULL)
        *out = NULL;
    if (a == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_resolve_start: NULL argument");
    err = rdps__addr_key_init(&key, peer, RDPS_DEFAULT_CM_PORT, 0);
    if (err < 0)
        return rdps__prepend_err(err, "addr_resolve_start: ");
    struct rdps_addr_peer *fresh = calloc(1, sizeof(*fresh));
    if (fresh == NULL)
        return rdps__set_err(RDPS_ENOMEM, "addr_resolve_start: out of memory");
    struct rdps_addr_entry *e =
        rdps__addr_table_acquire(&a->peers, &key, &fresh->entry, &must_start);
    bool created = e == &fresh->entry;
    if (!created)
        free(fresh);
    struct rdps_addr_peer *p = (struct rdps_addr_peer *)e;
    if (created) {
        p->owner = a;
        rdps__addr_key_format(&key, p->name, sizeof(p->name));
        p->cm.kind = CM_OWNER_PEER;
        p->cm.object = p;
    } else if (!must_start) {
        a->stats.resolve_cache_hits++;
    }
    if (must_start) {
        err = peer_start(p);
        if (err < 0) {
            rdps__addr_peer_release(p);
            return err;
        }
    }
    *out = p;
    return 0;
}

int rdps__addr_peer_state(struct rdps_addr_peer *p, const struct rdps_dest **dest)
{
    if (p == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_peer_state: NULL peer");
    int state = rdps__addr_entry_state(&p->entry);
    if (state == 1 && dest != NULL)
        *dest = &p->dest;
    return state;
}

void rdps__addr_peer_release(struct rdps_addr_peer *p)
{
    if (p == NULL)
        return;
    if (!rdps__addr_table_release(&p->owner->peers, &p->entry))
        return;
    destroy_id(&p->id);
    destroy_ahs(&p->retired, &p->ah);
    free(p);
}

static const char *sidr_status_text(int status)
{
    /* SIDR_REP status values (IBA 12.11.2) that rdma_cm passes up as positive numbers. */
    switch (status) {
    case 1:
        return "no rdps listener on that port (service ID not supported)";
    case 2:
        return "request rejected by the peer";
    case 3:
        return "peer has no QP for that service";
    case 4:
        return "peer asks to redirect (not supported)";
    case 5:
        return "peer's UD protocol version unsupported";
    default:
        return "peer refused the request";
    }
}

/* Everything needed from an event is copied before the ack (the event is freed by it). */
struct event_copy {
    enum rdma_cm_event_type type;
    int status;
    struct rdma_cm_id *id;
    struct rdma_ud_param ud;
};

static enum rdps_addr_event_kind event_kind(enum rdma_cm_event_type type)
{
    switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        return RDPS_ADDR_EV_ADDR_RESOLVED;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        return RDPS_ADDR_EV_ROUTE_RESOLVED;
    case RDMA_CM_EVENT_ESTABLISHED:
        return RDPS_ADDR_EV_ESTABLISHED;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
        return RDPS_ADDR_EV_ERROR;
    case RDMA_CM_EVENT_ADDR_CHANGE:
        return RDPS_ADDR_EV_ADDR_CHANGE;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        return RDPS_ADDR_EV_DEVICE_REMOVAL;
    case RDMA_CM_EVENT_MULTICAST_JOIN:
        return RDPS_ADDR_EV_MC_JOIN;
    case RDMA_CM_EVENT_MULTICAST_ERROR:
        return RDPS_ADDR_EV_MC_ERROR;
    default:
        return RDPS_ADDR_EV_OTHER;
    }
}

/* Returns true when the peer's id must be destroyed and resolution restarted after the ack. */
static bool peer_on_event(struct rdps_addr_peer *p, const struct event_copy *ev)
{
    struct rdps_addr *a = p->owner;
    char buf[160];

    enum rdps_addr_action action = rdps__addr_peer_action(&p->entry, event_kind(ev->type));
    if (action == RDPS_ADDR_ACT_IGNORE)
        return false; /* late event for an attempt that already ended */
    if (action == RDPS_ADDR_ACT_RESTART) {
        /* The local address moved (e.g. bonding failover): the old AH may now be wrong. */
        a->stats.readdresses++;
        p->entry.invalidations++;
        return true;
    }
    switch (ev->type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (!same_device(a, p->id)) {
            snprintf(buf, sizeof(buf),
                     "reached through %s port %u, but the transport uses %s port %u",
                     device_name_of(p->id->verbs), p->id->port_num, device_name_of(a->info.verbs),
                     a->info.port_num);
            peer_fail(p, RDPS_EHOSTUNREACH, "resolve %s: host unreachable from this port: %s",
                      p->name, buf);
        } else if (rdma_resolve_route(p->id, (int)a->timeout_ms) != 0) {
            peer_fail(p, rdps__errno_code(errno), "resolve %s: rdma_resolve_route: %s", p->name,
                      strerror(errno));
        }
        return false;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        struct rdma_conn_param param;
        memset(&param, 0, sizeof(param));
        param.qp_num = a->info.qpn;
        if (rdma_connect(p->id, &param) != 0)
            peer_fail(p, rdps__errno_code(errno), "resolve %s: rdma_connect (SIDR): %s", p->name,
                      strerror(errno));
        return false;
    }
    case RDMA_CM_EVENT_ESTABLISHED: {
        struct ibv_ah_attr attr = ev->ud.ah_attr;
        if (attr.port_num != a->info.port_num) {
            snprintf(buf, sizeof(buf), "route uses port %u, transport port %u", attr.port_num,
                     a->info.port_num);
            peer_fail(p, RDPS_EHOSTUNREACH, "resolve %s: %s", p->name, buf);
            return false;
        }
        struct ibv_ah *ah = ibv_create_ah(a->info.pd, &attr);
        if (ah == NULL) {
            peer_fail(p, rdps__errno_code(errno), "resolve %s: ibv_create_ah: %s", p->name,
                      strerror(errno));
            return false;
        }
        retire_ah(&p->retired, &p->ah);
        p->ah = ah;
        p->dest.ah = ah;
        p->dest.remote_qpn = ev->ud.qp_num;
        p->dest.remote_qkey = ev->ud.qkey;
        rdps__addr_entry_set_ready(&p->entry);
        a->stats.resolves_ready++;
        RDPS_LOG_DBG("addr: resolved peer QPN 0x%06x Q_Key 0x%08x", ev->ud.qp_num, ev->ud.qkey);
        return false;
    }
    case RDMA_CM_EVENT_ADDR_ERROR:
        snprintf(buf, sizeof(buf), "%s", strerror(ev->status < 0 ? -ev->status : EHOSTUNREACH));
        peer_fail(p, RDPS_EHOSTUNREACH, "resolve %s: host unreachable (address resolution: %s)",
                  p->name, buf);
        return false;
    case RDMA_CM_EVENT_ROUTE_ERROR:
        snprintf(buf, sizeof(buf), "%s", strerror(ev->status < 0 ? -ev->status : EHOSTUNREACH));
        peer_fail(p, RDPS_EHOSTUNREACH, "resolve %s: host unreachable (route resolution: %s)",
                  p->name, buf);
        return false;
    case RDMA_CM_EVENT_UNREACHABLE:
        if (ev->status < 0) {
            snprintf(buf, sizeof(buf), "%s", strerror(-ev->status));
            peer_fail(p, RDPS_EHOSTUNREACH, "resolve %s: host unreachable (no SIDR answer: %s)",
                      p->name, buf);
        } else {
            peer_fail(p, RDPS_ECONNREFUSED, "resolve %s: connection refused: %s", p->name,
                      sidr_status_text(ev->status));
        }
        return false;
    case RDMA_CM_EVENT_REJECTED:
        snprintf(buf, sizeof(buf), "status %d", ev->status);
        peer_fail(p, RDPS_ECONNREFUSED, "resolve %s: connection refused (rejected, %s)", p->name,
                  buf);
        return false;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        peer_fail(p, RDPS_ENODEV, "resolve %s: %s", p->name, "RDMA device removed");
        return false;
    default:
        return false;
    }
}

/* ---- multicast groups ------------------------------------------------------------------- */

static void group_fail(struct rdps_addr_group *g, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void group_fail(struct rdps_addr_group *g, int err, const char *fmt, ...)
{
    char text[sizeof(g->entry.error_text)];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (g->entry.state == RDPS_ENTRY_PENDING)
        g->owner->stats.joins_failed++;
    rdps__addr_entry_set_failed(&g->entry, err, "%s", text);
    RDPS_LOG_INF("addr: %s", g->entry.error_text);
}

static void group_detach(struct rdps_addr_group *g)
{
    if (!g->attached)
        return;
    int rc = rdps__verbs_transport_detach_mcast(g->owner->transport, &g->mgid, g->mlid);
    if (rc != 0)
        RDPS_LOG_WRN("addr: ibv_detach_mcast: %s", rdps_last_error_message());
    g->attached = false;
    g->owner->stats.qp_detaches++;
}

/*
 * Leaves (or cancels) the id's join before destroying it: librdmacm frees its
 * per-join state only in rdma_leave_multicast, not in rdma_destroy_id.
 */
static void group_drop_id(struct rdps_addr_group *g)
{
    if (g->id != NULL && g->join_issued)
        rdma_leave_multicast(g->id, (struct sockaddr *)&g->entry.key.addr);
    g->join_issued = false;
    destroy_id(&g->id);
}

static int group_issue_join(struct rdps_addr_group *g)
{
    struct rdma_cm_join_mc_attr_ex attr;

    memset(&attr, 0, sizeof(attr));
    attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
    attr.join_flags = (g->mode == RDPS_JOIN_SEND_ONLY && !g->use_full_join)
                          ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER
                          : RDMA_MC_JOIN_FLAG_FULLMEMBER;
    attr.addr = (struct sockaddr *)&g->entry.key.addr;
    if (rdma_join_multicast_ex(g->id, &attr, g) == 0) {
        g->join_issued = true;
        return 0;
    }
    int saved = errno;
    if (attr.join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER &&
        (saved == ENOSYS || saved == EOPNOTSUPP || saved == EINVAL)) {
        /* Older kernels and some devices refuse send-only joins: a full join still sends. */
        RDPS_LOG_WRN("addr: send-only join refused (%s); joining as a full member instead",
                     strerror(saved));
        g->use_full_join = true;
        g->owner->stats.send_only_fallbacks++;
        return group_issue_join(g);
    }
    return rdps__errno_code(saved);
}

static int group_start(struct rdps_addr_group *g)
{
    struct rdps_addr *a = g->owner;
    struct sockaddr_storage src;
    int err;

    group_detach(g);
    group_drop_id(g);
    rdps__addr_entry_start(&g->entry, now_ms() + a->timeout_ms);
    a->stats.joins_started++;
    if (!a->has_local) {
        group_fail(g, RDPS_EADDRNOTAVAIL, "join %s: %s", g->name,
                   "no local IP address to bind the rdma_cm id to (set local_addr)");
        return rdps__set_err(g->entry.error, "%s", g->entry.error_text);
    }
    if (rdma_create_id(a->channel, &g->id, &g->cm, RDMA_PS_UDP) != 0) {
        g->id = NULL;
        err = rdps__errno_code(errno);
        group_fail(g, err, "join %s: rdma_create_id: %s", g->name, strerror(errno));
        return rdps__set_err(err, "%s", g->entry.error_text);
    }
    memcpy(&src, &a->local, sizeof(src));
    set_port(&src, 0);
    /* A join needs the id bound to the local address (it picks the device and port). */
    if (rdma_bind_addr(g->id, (struct sockaddr *)&src) != 0) {
        err = rdps__errno_code(errno);
        group_fail(g, err, "join %s: rdma_bind_addr: %s", g->name, strerror(errno));
        group_drop_id(g);
        return rdps__set_err(err, "%s", g->entry.error_text);
    }
    err = group_issue_join(g);
    if (err < 0) {
        group_fail(g, err, "join %s: rdma_join_multicast_ex: %s", g->name, rdps_strerror(err));
        group_drop_id(g);
        return rdps__set_err(err, "%s", g->entry.error_text);
    }
    return 0;
}

int rdps__addr_join_start(struct rdps_addr *a, const struct sockaddr *group,
                          enum rdps_join_mode mode, struct rdps_addr_group **out)
{
    struct rdps_addr_key key;
    bool must_start;
    char name[ADDR_TEXT];
    int err;

    if (out != NULL)
        *out = NULL;
    if (a == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_join_start: NULL argument");
    if (mode != RDPS_JOIN_FULL && mode != RDPS_JOIN_SEND_ONLY)
        return rdps__set_err(RDPS_EINVAL, "addr_join_start: join mode %d is not FULL or SEND_ONLY",
                             (int)mode);
    err = rdps__addr_key_init(&key, group, 0, (int)mode);
    if (err < 0)
        return rdps__prepend_err(err, "addr_join_start: ");
    /* The port means nothing for a group; it must not split the refcount. */
    set_port(&key.addr, 0);
    bool multicast = key.addr.ss_family == AF_INET
                         ? IN_MULTICAST(ntohl(((struct sockaddr_in *)&key.addr)->sin_addr.s_addr))
                         : IN6_IS_ADDR_MULTICAST(&((struct sockaddr_in6 *)&key.addr)->sin6_addr);
    if (!multicast)
        return rdps__set_err(
            RDPS_EINVAL, "addr_join_start: %s is not a multicast address",
            rdps__sockaddr_format((struct sockaddr *)&key.addr, name, sizeof(name)));

    struct rdps_addr_group *fresh = calloc(1, sizeof(*fresh));
    if (fresh == NULL)
        return rdps__set_err(RDPS_ENOMEM, "addr_join_start: out of memory");
    struct rdps_addr_entry *e =
        rdps__addr_table_acquire(&a->groups, &key, &fresh->entry, &must_start);
    bool created = e == &fresh->entry;
    if (!created)
        free(fresh);
    struct rdps_addr_group *g = (struct rdps_addr_group *)e;
    if (created) {
        g->owner = a;
        g->mode = mode;
        rdps__sockaddr_format((struct sockaddr *)&key.addr, g->name, sizeof(g->name));
        g->cm.kind = CM_OWNER_GROUP;
        g->cm.object = g;
    }
    if (must_start) {
        err = group_start(g);
        if (err < 0) {
            rdps__addr_leave(g);
            return err;
        }
    }
    *out = g;
    return 0;
}

int rdps__addr_group_state(struct rdps_addr_group *g, const struct rdps_dest **dest)
{
    if (g == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_group_state: NULL group");
    int state = rdps__addr_entry_state(&g->entry);
    if (state == 1 && dest != NULL)
        *dest = &g->dest;
    return state;
}

int rdps__addr_group_info(const struct rdps_addr_group *g, struct rdps_addr_group_info *out)
{
    if (g == NULL || out == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_group_info: NULL argument");
    memset(out, 0, sizeof(*out));
    memcpy(out->mgid, g->mgid.raw, sizeof(out->mgid));
    out->mlid = g->mlid;
    out->qkey = g->qkey;
    out->qp_attached = g->attached;
    out->full_join_fallback = g->use_full_join;
    out->refcount = g->entry.refcount;
    out->rejoins = g->entry.invalidations;
    return 0;
}

void rdps__addr_leave(struct rdps_addr_group *g)
{
    if (g == NULL)
        return;
    if (!rdps__addr_table_release(&g->owner->groups, &g->entry))
        return;
    /* Detach first so no datagram of the group lands on the QP after leave returns. */
    group_detach(g);
    group_drop_id(g);
    destroy_ahs(&g->retired, &g->ah);
    free(g);
}

/* Returns true when the group must be re-joined on a new id after the ack. */
static bool group_on_event(struct rdps_addr_group *g, const struct event_copy *ev)
{
    struct rdps_addr *a = g->owner;
    char buf[160];

    enum rdps_addr_action action = rdps__addr_group_action(
        &g->entry, g->mode == RDPS_JOIN_SEND_ONLY && !g->use_full_join, event_kind(ev->type));
    switch (action) {
    case RDPS_ADDR_ACT_IGNORE:
        return false;
    case RDPS_ADDR_ACT_FALLBACK_FULL:
        RDPS_LOG_WRN("addr: send-only join of %s failed (status %d); joining as a full member",
                     g->name, ev->status);
        g->use_full_join = true;
        a->stats.send_only_fallbacks++;
        return true;
    case RDPS_ADDR_ACT_RESTART:
        a->stats.rejoins++;
        g->entry.invalidations++;
        return true;
    default:
        break;
    }
    switch (ev->type) {
    case RDMA_CM_EVENT_MULTICAST_JOIN: {
        struct ibv_ah_attr attr = ev->ud.ah_attr;
        if (!same_device(a, g->id) || attr.port_num != a->info.port_num) {
            snprintf(buf, sizeof(buf),
                     "joined through %s port %u, but the transport uses %s port %u",
                     device_name_of(g->id->verbs), attr.port_num, device_name_of(a->info.verbs),
                     a->info.port_num);
            group_fail(g, RDPS_ENODEV, "join %s: %s", g->name, buf);
            return false;
        }
        struct ibv_ah *ah = ibv_create_ah(a->info.pd, &attr);
        if (ah == NULL) {
            group_fail(g, rdps__errno_code(errno), "join %s: ibv_create_ah: %s", g->name,
                       strerror(errno));
            return false;
        }
        g->mgid = attr.grh.dgid;
        g->mlid = attr.dlid;
        g->qkey = ev->ud.qkey;
        if (g->mode == RDPS_JOIN_FULL) {
            int rc = rdps__verbs_transport_attach_mcast(a->transport, &g->mgid, g->mlid);
            if (rc != 0) {
                ibv_destroy_ah(ah);
                group_fail(g, rc, "join %s: %s", g->name, rdps_last_error_message());
                return false;
            }
            g->attached = true;
            a->stats.qp_attaches++;
        }
        retire_ah(&g->retired, &g->ah);
        g->ah = ah;
        g->dest.ah = ah;
        g->dest.remote_qpn = MCAST_QPN;
        g->dest.remote_qkey = ev->ud.qkey;
        if (ev->ud.qkey != a->info.qkey)
            RDPS_LOG_WRN("addr: group Q_Key 0x%08x differs from the QP's 0x%08x: receives will be "
                         "dropped by the HCA",
                         ev->ud.qkey, a->info.qkey);
        rdps__addr_entry_set_ready(&g->entry);
        a->stats.joins_ready++;
        return false;
    }
    case RDMA_CM_EVENT_MULTICAST_ERROR: {
        int code = ev->status < 0 ? rdps__errno_code(ev->status) : RDPS_EPROTO;
        group_fail(g, code, "join %s: multicast join failed: %s", g->name,
                   ev->status < 0 ? strerror(-ev->status) : "rejected by the fabric");
        return false;
    }
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        group_detach(g);
        group_fail(g, RDPS_ENODEV, "join %s: %s", g->name, "RDMA device removed");
        return false;
    default:
        return false;
    }
}

/* ---- listener (answers other contexts' resolves) ---------------------------------------- */

static void listener_on_request(struct rdps_addr *a, struct rdma_cm_id *child)
{
    if (!same_device(a, child)) {
        /* Our QPN is meaningless on another device: refuse rather than mislead. */
        rdma_reject(child, NULL, 0);
        a->stats.requests_rejected++;
        RDPS_LOG_INF("addr: refused a resolve arriving on %s port %u (transport is on %s)",
                     device_name_of(child->verbs), child->port_num, device_name_of(a->info.verbs));
        return;
    }
    struct rdma_conn_param param;
    memset(&param, 0, sizeof(param));
    /* The cm id owns no QP: the answer names the shared QP so peers send straight to it. */
    param.qp_num = a->info.qpn;
    if (rdma_accept(child, &param) != 0) {
        RDPS_LOG_WRN("addr: rdma_accept (SIDR reply): %s", strerror(errno));
        a->stats.requests_rejected++;
        return;
    }
    a->stats.requests_answered++;
}

static int listen_start(struct rdps_addr *a, uint16_t port)
{
    struct sockaddr_storage any;
    const struct sockaddr *bind_to;

    if (a->has_local) {
        memcpy(&any, &a->local, sizeof(any));
    } else {
        memset(&any, 0, sizeof(any));
        any.ss_family = AF_INET;
    }
    set_port(&any, port);
    bind_to = (const struct sockaddr *)&any;
    a->listen_owner.kind = CM_OWNER_LISTENER;
    a->listen_owner.object = a;
    if (rdma_create_id(a->channel, &a->listen_id, &a->listen_owner, RDMA_PS_UDP) != 0) {
        a->listen_id = NULL;
        return rdps__set_err(rdps__errno_code(errno), "rdma_create_id (listener): %s",
                             strerror(errno));
    }
    if (rdma_bind_addr(a->listen_id, (struct sockaddr *)bind_to) != 0) {
        char name[ADDR_TEXT];
        int saved = errno;
        return rdps__set_err(rdps__errno_code(saved), "listen on %s: rdma_bind_addr: %s%s",
                             rdps__sockaddr_format(bind_to, name, sizeof(name)), strerror(saved),
                             saved == EADDRINUSE ? " (another context uses this cm_port)" : "");
    }
    if (rdma_listen(a->listen_id, LISTEN_DEPTH) != 0)
        return rdps__set_err(rdps__errno_code(errno), "rdma_listen: %s", strerror(errno));
    a->listen_port = ntohs(rdma_get_src_port(a->listen_id));
    return 0;
}

/* ---- context ---------------------------------------------------------------------------- */

int rdps__addr_create(const struct rdps_addr_config *cfg, struct rdps_addr **out)
{
    struct rdps_addr *a;
    int err;

    if (out != NULL)
        *out = NULL;
    if (cfg == NULL || out == NULL || cfg->transport == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_create: a config with a transport is required");
    if (cfg->cm_port < RDPS_ADDR_NO_LISTEN || cfg->cm_port > 65535)
        return rdps__set_err(RDPS_EINVAL, "addr_create: cm_port %d out of range",
                             (int)cfg->cm_port);
    if (cfg->local_addr != NULL && cfg->local_addr->sa_family != AF_INET &&
        cfg->local_addr->sa_family != AF_INET6)
        return rdps__set_err(RDPS_EINVAL, "addr_create: local_addr is not IPv4 or IPv6");

    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return rdps__set_err(RDPS_ENOMEM, "addr_create: out of memory");
    a->transport = cfg->transport;
    a->timeout_ms =
        cfg->resolve_timeout_ms != 0 ? cfg->resolve_timeout_ms : RDPS_DEFAULT_RESOLVE_TIMEOUT_MS;
    rdps__addr_table_init(&a->peers);
    rdps__addr_table_init(&a->groups);
    err = rdps__verbs_transport_info(cfg->transport, &a->info);
    if (err < 0) {
        rdps__prepend_err(err, "addr_create: ");
        goto err_free;
    }
    if (cfg->local_addr != NULL) {
        memcpy(&a->local, cfg->local_addr, sockaddr_size(cfg->local_addr));
        a->has_local = true;
    } else if (a->info.has_bound_addr) {
        a->local = a->info.bound_addr;
        a->has_local = true;
    }

    a->channel = rdma_create_event_channel();
    if (a->channel == NULL) {
        err = rdps__set_err(rdps__errno_code(errno),
                            "addr_create: rdma_create_event_channel: %s (is rdma_ucm loaded?)",
                            strerror(errno));
        goto err_free;
    }
    int flags = fcntl(a->channel->fd, F_GETFL);
    if (flags < 0 || fcntl(a->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        err = rdps__set_err(rdps__errno_code(errno), "addr_create: fcntl(O_NONBLOCK): %s",
                            strerror(errno));
        goto err_channel;
    }
    if (cfg->cm_port != RDPS_ADDR_NO_LISTEN) {
        err = listen_start(a, cfg->cm_port != 0 ? (uint16_t)cfg->cm_port : RDPS_DEFAULT_CM_PORT);
        if (err < 0) {
            rdps__prepend_err(err, "addr_create: ");
            goto err_listen;
        }
    }
    *out = a;
    return 0;

err_listen:
    destroy_id(&a->listen_id);
err_channel:
    rdma_destroy_event_channel(a->channel);
err_free:
    free(a);
    return err;
}

void rdps__addr_destroy(struct rdps_addr *a)
{
    if (a == NULL)
        return;
    /* Groups first: detach from the shared QP before the ids go. */
    while (a->groups.head != NULL) {
        struct rdps_addr_group *g = (struct rdps_addr_group *)a->groups.head;
        g->entry.refcount = 1;
        rdps__addr_leave(g);
    }
    while (a->peers.head != NULL) {
        struct rdps_addr_peer *p = (struct rdps_addr_peer *)a->peers.head;
        p->entry.refcount = 1;
        rdps__addr_peer_release(p);
    }
    destroy_id(&a->listen_id);
    rdma_destroy_event_channel(a->channel);
    free(a);
}

int rdps__addr_fd(const struct rdps_addr *a)
{
    return a != NULL ? a->channel->fd : RDPS_EINVAL;
}

uint16_t rdps__addr_listen_port(const struct rdps_addr *a)
{
    return a != NULL ? a->listen_port : 0;
}

void rdps__addr_get_stats(const struct rdps_addr *a, struct rdps_addr_stats *out)
{
    if (a != NULL && out != NULL)
        *out = a->stats;
}

static void restart_peer(struct rdps_addr_peer *p)
{
    /* The old AH stays alive (retired) for sends already posted with it. */
    retire_ah(&p->retired, &p->ah);
    p->dest.ah = NULL;
    if (peer_start(p) < 0)
        RDPS_LOG_WRN("addr: re-resolve failed: %s", p->entry.error_text);
}

static void restart_group(struct rdps_addr_group *g)
{
    retire_ah(&g->retired, &g->ah);
    g->dest.ah = NULL;
    if (group_start(g) < 0)
        RDPS_LOG_WRN("addr: re-join failed: %s", g->entry.error_text);
}

int rdps__addr_peer_refresh(struct rdps_addr_peer *p)
{
    if (p == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_peer_refresh: NULL peer");
    p->owner->stats.readdresses++;
    p->entry.invalidations++;
    restart_peer(p);
    return p->entry.state == RDPS_ENTRY_FAILED
               ? rdps__set_err(p->entry.error, "%s", p->entry.error_text)
               : 0;
}

int rdps__addr_group_rejoin(struct rdps_addr_group *g)
{
    if (g == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_group_rejoin: NULL group");
    g->owner->stats.rejoins++;
    g->entry.invalidations++;
    restart_group(g);
    return g->entry.state == RDPS_ENTRY_FAILED
               ? rdps__set_err(g->entry.error, "%s", g->entry.error_text)
               : 0;
}

static void expire_deadlines(struct rdps_addr *a)
{
    uint64_t now = now_ms();

    for (struct rdps_addr_entry *e = a->peers.head; e != NULL; e = e->next) {
        if (rdps__addr_entry_check_deadline(e, now)) {
            struct rdps_addr_peer *p = (struct rdps_addr_peer *)e;
            a->stats.resolves_failed++;
            /* No answer in time is what a user calls an unreachable host. */
            e->error = RDPS_EHOSTUNREACH;
            snprintf(e->error_text, sizeof(e->error_text),
                     "resolve %s: host unreachable (no answer within %u ms)", p->name,
                     a->timeout_ms);
            destroy_id(&p->id); /* cancels whatever step was under way */
        }
    }
    for (struct rdps_addr_entry *e = a->groups.head; e != NULL; e = e->next) {
        if (rdps__addr_entry_check_deadline(e, now)) {
            struct rdps_addr_group *g = (struct rdps_addr_group *)e;
            a->stats.joins_failed++;
            snprintf(e->error_text, sizeof(e->error_text),
                     "join %s: no answer within %u ms (timed out)", g->name, a->timeout_ms);
            group_drop_id(g);
        }
    }
}

int rdps__addr_process(struct rdps_addr *a)
{
    struct rdma_cm_event *event;
    int handled = 0;

    if (a == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_process: NULL context");
    /* Bounded so a flood of requests cannot starve the caller's data path. */
    while (handled < 64) {
        if (rdma_get_cm_event(a->channel, &event) != 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                break;
            return rdps__set_err(rdps__errno_code(errno), "addr_process: rdma_get_cm_event: %s",
                                 strerror(errno));
        }
        handled++;
        a->stats.cm_events++;
        struct event_copy ev = {.type = event->event, .status = event->status, .id = event->id};
        if (event->event == RDMA_CM_EVENT_ESTABLISHED ||
            event->event == RDMA_CM_EVENT_MULTICAST_JOIN)
            ev.ud = event->param.ud;
        /* CONNECT_REQUEST ids are new children; their context is the listener's. */
        struct cm_owner *owner = event->id != NULL ? event->id->context : NULL;
        RDPS_LOG_DBG("addr: CM event %s status %d", rdma_event_str(event->event), event->status);

        if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            listener_on_request(a, event->id);
            rdma_ack_cm_event(event);
            /* The SIDR reply is sent; the child id has no further use. */
            rdma_destroy_id(ev.id);
            continue;
        }
        rdma_ack_cm_event(event);
        if (owner == NULL)
            continue;
        if (owner->kind == CM_OWNER_PEER) {
            struct rdps_addr_peer *p = owner->object;
            if (p->id == ev.id && peer_on_event(p, &ev))
                restart_peer(p);
        } else if (owner->kind == CM_OWNER_GROUP) {
            struct rdps_addr_group *g = owner->object;
            if (g->id == ev.id && group_on_event(g, &ev))
                restart_group(g);
        } else if (owner->kind == CM_OWNER_LISTENER && ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
            RDPS_LOG_ERR("addr: RDMA device removed under the listener");
        }
    }
    expire_deadlines(a);
    return handled;
}

int rdps__addr_tick(struct rdps_addr *a)
{
    struct timespec ts;

    if (a == NULL)
        return rdps__set_err(RDPS_EINVAL, "addr_tick: NULL context");
    /* The coarse clock is read from the vDSO: no syscall on the busy path. */
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    if (now == a->last_tick_ms)
        return 0;
    a->last_tick_ms = now;
    return rdps__addr_process(a);
}
