/* SPDX-License-Identifier: BSD-2-Clause */
/* topic_table.c - the ctx's topics by id: find, get (create), put (free when unused). */
#include "topic_table.h"

#include <stdlib.h>
#include <string.h>

#include "rdps_error.h"

static unsigned bucket_of(uint64_t id)
{
    return (unsigned)((id * 0x9e3779b97f4a7c15ull) >> 58); /* 64 buckets */
}
_Static_assert(RDPS_TOPIC_TABLE_BUCKETS == 64, "bucket_of takes the top 6 bits");

void rdps__topic_table_init(struct rdps_topic_table *tt, const struct rdps_group_range *range,
                            uint32_t avoid_group)
{
    memset(tt, 0, sizeof(*tt));
    tt->range = *range;
    tt->avoid_group = avoid_group;
}

void rdps__topic_table_fini(struct rdps_topic_table *tt)
{
    for (unsigned b = 0; b < RDPS_TOPIC_TABLE_BUCKETS; b++) {
        while (tt->buckets[b]) {
            struct rdps_topic *t = tt->buckets[b];
            tt->buckets[b] = t->next;
            free(t);
        }
    }
}

struct rdps_topic *rdps__topic_table_find(const struct rdps_topic_table *tt, uint64_t topic_id)
{
    for (struct rdps_topic *t = tt->buckets[bucket_of(topic_id)]; t; t = t->next)
        if (t->id == topic_id)
            return t;
    return NULL;
}

int rdps__topic_table_get(struct rdps_topic_table *tt, const char *name, const char *group,
                          struct rdps_topic **out)
{
    int rc = rdps__topic_name_check(name);
    if (rc < 0)
        return rc;
    uint64_t id = rdps__topic_hash_id(name);
    uint32_t group_addr = 0;
    if (group != NULL && (rc = rdps__mcast_addr_parse(group, &group_addr)) < 0)
        return rdps__prepend_err(rc, "topic '%s': ", name);

    struct rdps_topic *t = rdps__topic_table_find(tt, id);
    if (t != NULL) {
        if (strcmp(t->name, name) != 0)
            return rdps__set_err(RDPS_EEXIST,
                                 "topics '%s' and '%s' hash to the same id 0x%016llx: rename one",
                                 t->name, name, (unsigned long long)id);
        if (group_addr != 0 && group_addr != t->group) {
            char a[16], b[16];
            return rdps__set_err(RDPS_EINVAL, "topic '%s' already uses group %s, not %s", name,
                                 rdps__ipv4_format(t->group, a, sizeof(a)),
                                 rdps__ipv4_format(group_addr, b, sizeof(b)));
        }
        *out = t;
        return 0;
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return rdps__set_err(RDPS_ENOMEM, "topic '%s': out of memory", name);
    strcpy(t->name, name); /* length checked by rdps__topic_name_check */
    t->id = id;
    t->group = group_addr ? group_addr : rdps__topic_hash_group(name, &tt->range, tt->avoid_group);
    unsigned b = bucket_of(id);
    t->next = tt->buckets[b];
    tt->buckets[b] = t;
    *out = t;
    return 0;
}

void rdps__topic_table_put(struct rdps_topic_table *tt, struct rdps_topic *topic)
{
    if (topic->subs != NULL || topic->pubs > 0 || topic->mapped)
        return;
    for (struct rdps_topic **p = &tt->buckets[bucket_of(topic->id)]; *p; p = &(*p)->next) {
        if (*p == topic) {
            *p = topic->next;
            break;
        }
    }
    free(topic);
}

uint32_t rdps__topic_table_group_of(const struct rdps_topic_table *tt, const char *name)
{
    const struct rdps_topic *t = rdps__topic_table_find(tt, rdps__topic_hash_id(name));
    return t && strcmp(t->name, name) == 0
               ? t->group
               : rdps__topic_hash_group(name, &tt->range, tt->avoid_group);
}
