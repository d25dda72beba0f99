/* SPDX-License-Identifier: BSD-2-Clause */
/* loopback_device.c - the public in-process device "loopback": every ctx of the process that
 * asks for it shares one threaded loopback fabric, created with the first and freed with the
 * last. */
#include "ctx_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"
#include "rdps_loopback.h"

/* Datagrams of a typical RoCE port (an active MTU of 1024 on a 1500-byte Ethernet link, as rxe
 * has): an application sees the fragmentation it will see on the fabric. */
#define LOOPBACK_DEVICE_MTU 1024u

static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdps_loopback_fabric *device_fabric;
static unsigned device_users;

int rdps__loopback_device_open(const rdps_config *cfg, struct rdps_transport **transport,
                               const struct rdps_membership_ops **ops, void **impl)
{
    int rc = 0;
    pthread_mutex_lock(&device_lock);
    if (device_fabric == NULL) {
        rc = rdps__loopback_fabric_create_threaded(&device_fabric);
        /* RDPS_LOOPBACK_MULTICAST=drop|nojoin: a fabric without multicast, for testing an
         * application's unicast mode and seed peers (rdps(7), "Unicast"). */
        const char *mc = getenv("RDPS_LOOPBACK_MULTICAST");
        if (rc == 0 && mc != NULL && strcmp(mc, "drop") == 0)
            rdps__loopback_fabric_set_multicast(device_fabric, RDPS_LOOPBACK_MCAST_DROP);
        else if (rc == 0 && mc != NULL && strcmp(mc, "nojoin") == 0)
            rdps__loopback_fabric_set_multicast(device_fabric, RDPS_LOOPBACK_MCAST_NO_JOIN);
    }
    if (rc == 0)
        device_users++;
    pthread_mutex_unlock(&device_lock);
    if (rc < 0)
        return rc;

    struct rdps_loopback_config lc = {
        .max_payload = LOOPBACK_DEVICE_MTU,
        .send_slots = cfg->send_slots,
        .recv_slots = cfg->recv_slots,
    };
    rc = rdps__loopback_create(device_fabric, &lc, transport);
    if (rc == 0) {
        rc = rdps__membership_loopback_create(device_fabric, *transport, ops, impl);
        if (rc < 0)
            (*transport)->ops->destroy(*transport);
    }
    if (rc < 0)
        rdps__loopback_device_close();
    return rc;
}

void rdps__loopback_device_close(void)
{
    pthread_mutex_lock(&device_lock);
    if (device_users > 0 && --device_users == 0) {
        rdps__loopback_fabric_destroy(device_fabric);
        device_fabric = NULL;
    }
    pthread_mutex_unlock(&device_lock);
}
