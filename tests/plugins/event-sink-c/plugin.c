/* event-sink in C: counts extension events and sums their actor ids (the least work a handler can do, so
 * benchmarks measure delivery; an event named `Log:...` is logged by name, `Defer:FEATURE` defers two walks of
 * the actor's FEATURE chain, `Register:FEATURE` defers registering FEATURE, implemented by the actor's `Mesh`
 * component, and a walk of its chain, and `Relay:EVENT` defers sending EVENT about the actor), and carries both
 * across a hot reload in event-sink's own state format. */
#include <gamefeature.h>
#include <stdio.h>
#include <string.h>

static gf_handler handler;
static uint64_t events, checksum;

const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode) {
    (void)world_name, (void)net_mode;
    printf("sink active\n"); /* standard output reaches the plugin's log, a line at a time */
    return gf_add_extension_handler("Pawn", 1, &handler) ? NULL : gf_last_error();
}

void gf_on_extension_event(uint32_t id, gf_actor actor, gf_str event) {
    (void)id;
    events++;
    checksum += actor;
    if (event.len >= 4 && memcmp(event.ptr, "Log:", 4) == 0) gf_info("%.*s", (int)event.len, event.ptr);
    if (event.len > 6 && memcmp(event.ptr, "Defer:", 6) == 0) {
        gf_str feature = {event.ptr + 6, event.len - 6};
        gf_defer_continue_chain(actor, feature);
        gf_defer_check_default_initialization(actor, feature);
    }
    if (event.len >= 6 && memcmp(event.ptr, "Relay:", 6) == 0) {
        gf_defer_send_event(actor, (gf_str){event.ptr + 6, event.len - 6});
    }
    if (event.len > 9 && memcmp(event.ptr, "Register:", 9) == 0) {
        gf_str feature = {event.ptr + 9, event.len - 9};
        gf_defer_register_feature(actor, feature, (gf_str){"Mesh", 4});
        gf_defer_continue_chain(actor, feature);
    }
}

/* WebAssembly is little-endian, like the state format. */
size_t gf_snapshot(uint8_t *state, size_t capacity) {
    if (capacity < 17) return 0;
    state[0] = 1;
    memcpy(state + 1, &events, 8);
    memcpy(state + 9, &checksum, 8);
    return 17;
}

const char *gf_restore(const uint8_t *state, size_t len) {
    if (len == 0 || state[0] != 1) return "unknown state format";
    if (len < 17) return "state is truncated";
    memcpy(&events, state + 1, 8);
    memcpy(&checksum, state + 9, 8);
    gf_info("restored a count of %llu events", (unsigned long long)events);
    return NULL;
}

bool gf_on_deactivating(void) {
    gf_info("received %llu events", (unsigned long long)events);
    return true;
}
