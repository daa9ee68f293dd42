/* backend: the list of device kinds a measure child can open (worker/backend.h). Adding a
 * backend is its own file, which exports one backend_ops, and one row here. */
#include "worker/backend.h"

#include <stdio.h>
#include <string.h>

/* In order of preference: backend_default takes the first whose probe accepts. */
static const backend_ops *const backends[] = {&backend_cuda, &backend_sim, &backend_replay};

#define NBACKENDS (sizeof backends / sizeof backends[0])

const backend_ops *backend_find(const char *name) {
  for (size_t i = 0; name && i < NBACKENDS; i++)
    if (strcmp(backends[i]->name, name) == 0) return backends[i];
  return NULL;
}

const backend_ops *backend_default(char *why, size_t len) {
  char reason[256];
  if (len) why[0] = '\0';
  for (size_t i = 0; i < NBACKENDS; i++) {
    reason[0] = '\0';
    if (backends[i]->probe(reason, sizeof reason)) return backends[i];
    if (len && !why[0]) snprintf(why, len, "%s", reason);
  }
  return NULL;
}

int backend_simulated(const char *name) {
  const backend_ops *b = backend_find(name);
  return !b || b->simulated;
}

void backend_names(char *buf, size_t len) {
  size_t n = 0;
  if (len) buf[0] = '\0';
  for (size_t i = 0; i < NBACKENDS && n < len; i++) {
    const char *sep = i == 0 ? "" : i + 1 == NBACKENDS ? " or " : ", ";
    int w = snprintf(buf + n, len - n, "%s%s", sep, backends[i]->name);
    if (w < 0) break;
    n += (size_t)w;
  }
}

const char *backend_recorded_name(void) {
  for (size_t i = 0; i < NBACKENDS; i++)
    if (backends[i]->recorded) return backends[i]->name;
  return "replay";
}
