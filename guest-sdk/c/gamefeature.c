/* The C helper: the world's exports, fanned out to the gf_* hooks (see gamefeature.h). */
#include "gamefeature.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WEAK __attribute__((weak))

static void defer(gf_actor actor, gf_str feature, gamefeature_plugin_init_states_chain_work_t work);

static gf_str str_of(const game_feature_string_t *s) { return (gf_str){(const char *)s->ptr, s->len}; }
static game_feature_string_t borrow(const char *c) { return (game_feature_string_t){(uint8_t *)c, strlen(c)}; }

bool gf_str_eq(gf_str s, const char *c) { return strlen(c) == s.len && memcmp(s.ptr, c, s.len) == 0; }

/* ---- Errors ---- */

static char last_error[256];

const char *gf_last_error(void) { return last_error; }

/* Writes why a host call was refused into `text`. */
static void describe(const gamefeature_plugin_types_error_t *error, char *text, size_t size) {
    static const char *const cases[] = {"unknown-actor", "unknown-class", "unknown-asset",
                                        "unknown-state", "denied",        "invalid"};
    const char *kind = error->tag < 6 ? cases[error->tag] : "error";
    if (error->tag == GAMEFEATURE_PLUGIN_TYPES_ERROR_UNKNOWN_ACTOR) {
        snprintf(text, size, "%s: %llu", kind, (unsigned long long)error->val.unknown_actor);
    } else {
        /* Every other case carries a string, at the same place in the union. */
        const game_feature_string_t *detail = &error->val.unknown_class;
        snprintf(text, size, "%s: %.*s", kind, (int)detail->len, (const char *)detail->ptr);
    }
}

/* Takes a refusal: describes it (gf_last_error) and frees it. */
static bool failed(gamefeature_plugin_types_error_t *error) {
    describe(error, last_error, sizeof last_error);
    gamefeature_plugin_types_error_free(error);
    return false;
}

/* ---- Host calls ---- */

void gf_log(gamefeature_plugin_log_level_t level, const char *format, ...) {
    char line[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    game_feature_string_t message = borrow(line);
    gamefeature_plugin_log_log(level, &message);
}

bool gf_add_extension_handler(const char *receiver, uint32_t id, gf_handler *out) {
    game_feature_string_t class_name = borrow(receiver);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_components_add_extension_handler(&class_name, id, out, &error) || failed(&error);
}

void gf_release_handler(gf_handler handler) { gamefeature_plugin_components_extension_handler_drop_own(handler); }

bool gf_send_event(gf_actor actor, const char *event) {
    game_feature_string_t e = borrow(event);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_components_send_extension_event(actor, &e, &error) || failed(&error);
}

bool gf_register_feature(gf_actor actor, const char *feature, const char *implementer) {
    game_feature_string_t f = borrow(feature), i = borrow(implementer);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_init_states_register_feature(actor, &f, &i, &error) || failed(&error);
}

bool gf_continue_chain(gf_actor actor, const char *feature) {
    game_feature_string_t f = borrow(feature);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_init_states_continue_init_state_chain(actor, &f, &error) || failed(&error);
}

bool gf_reached(gf_actor actor, const char *feature, const char *state) {
    game_feature_string_t f = borrow(feature), s = borrow(state);
    gamefeature_plugin_types_error_t error;
    bool reached = false;
    if (!gamefeature_plugin_init_states_has_feature_reached(actor, &f, &s, &reached, &error)) return failed(&error);
    return reached;
}

bool gf_subscribe_class(const char *class_name, const char *feature, const char *state, bool call_if_reached,
                        uint32_t id, gf_subscription *out) {
    game_feature_string_t c = borrow(class_name), f = borrow(feature ? feature : ""), s = borrow(state ? state : "");
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_init_states_subscribe_class(&c, feature ? &f : NULL, state ? &s : NULL, call_if_reached,
                                                          id, out, &error) ||
           failed(&error);
}

void gf_release_subscription(gf_subscription subscription) {
    gamefeature_plugin_init_states_subscription_drop_own(subscription);
}

size_t gf_count_actors(const char *class_name) {
    game_feature_string_t c = borrow(class_name);
    gamefeature_plugin_actors_list_actor_id_t actors;
    gamefeature_plugin_types_error_t error;
    if (!gamefeature_plugin_actors_actors_of_class(&c, &actors, &error)) return failed(&error);
    size_t count = actors.len;
    gamefeature_plugin_actors_list_actor_id_free(&actors);
    return count;
}

bool gf_read_text_asset(const char *name, char *text, size_t capacity) {
    game_feature_string_t n = borrow(name);
    game_feature_list_u8_t bytes;
    gamefeature_plugin_types_error_t error;
    if (!gamefeature_plugin_assets_read_asset(&n, &bytes, &error)) return failed(&error);
    bool fits = bytes.len < capacity;
    if (fits) {
        memcpy(text, bytes.ptr, bytes.len);
        text[bytes.len] = '\0';
    } else {
        snprintf(last_error, sizeof last_error, "asset %s is %zu bytes, more than %zu", name, bytes.len, capacity - 1);
    }
    game_feature_list_u8_free(&bytes);
    return fits;
}

bool gf_get_integer(gf_actor actor, const char *component, const char *name, int64_t *out) {
    game_feature_string_t c = borrow(component), n = borrow(name);
    gamefeature_plugin_actors_option_value_t value;
    gamefeature_plugin_types_error_t error;
    if (!gamefeature_plugin_actors_get_property(actor, &c, &n, &value, &error)) return failed(&error);
    bool integer = value.is_some && value.val.tag == GAMEFEATURE_PLUGIN_TYPES_VALUE_INTEGER;
    if (integer) *out = value.val.val.integer;
    gamefeature_plugin_actors_option_value_free(&value);
    return integer;
}

bool gf_get_float(gf_actor actor, const char *component, const char *name, double *out) {
    game_feature_string_t c = borrow(component), n = borrow(name);
    gamefeature_plugin_actors_option_value_t value;
    gamefeature_plugin_types_error_t error;
    if (!gamefeature_plugin_actors_get_property(actor, &c, &n, &value, &error)) return failed(&error);
    bool number = value.is_some && value.val.tag == GAMEFEATURE_PLUGIN_TYPES_VALUE_FLOAT;
    if (number) *out = value.val.val.float_;
    gamefeature_plugin_actors_option_value_free(&value);
    return number;
}

static bool set_value(gf_actor actor, const char *component, const char *name, gamefeature_plugin_types_value_t *value) {
    game_feature_string_t c = borrow(component), n = borrow(name);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_actors_set_property(actor, &c, &n, value, &error) || failed(&error);
}

bool gf_set_integer(gf_actor actor, const char *component, const char *name, int64_t value) {
    gamefeature_plugin_types_value_t v = {.tag = GAMEFEATURE_PLUGIN_TYPES_VALUE_INTEGER, .val = {.integer = value}};
    return set_value(actor, component, name, &v);
}

bool gf_set_float(gf_actor actor, const char *component, const char *name, double value) {
    gamefeature_plugin_types_value_t v = {.tag = GAMEFEATURE_PLUGIN_TYPES_VALUE_FLOAT, .val = {.float_ = value}};
    return set_value(actor, component, name, &v);
}

bool gf_set_text(gf_actor actor, const char *component, const char *name, const char *value) {
    gamefeature_plugin_types_value_t v = {.tag = GAMEFEATURE_PLUGIN_TYPES_VALUE_TEXT, .val = {.text = borrow(value)}};
    return set_value(actor, component, name, &v);
}

bool gf_has_authority(gf_actor actor) {
    gamefeature_plugin_types_error_t error;
    bool authority = false;
    if (!gamefeature_plugin_actors_has_authority(actor, &authority, &error)) return failed(&error);
    return authority;
}

bool gf_request_component(const char *receiver, const char *component, gf_request *out) {
    game_feature_string_t r = borrow(receiver), c = borrow(component);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_components_add_component_request(&r, &c, 0, out, &error) || failed(&error);
}

void gf_release_request(gf_request request) { gamefeature_plugin_components_component_request_drop_own(request); }

bool gf_watch_property(gf_actor actor, const char *component, const char *name, uint32_t id, gf_watch *out) {
    game_feature_string_t c = borrow(component), n = borrow(name);
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_components_watch_property(actor, &c, &n, id, out, &error) || failed(&error);
}

void gf_release_watch(gf_watch watch) { gamefeature_plugin_components_property_watch_drop_own(watch); }

bool gf_start_timer(uint64_t period_us, bool repeating, uint32_t id, gf_timer *out) {
    gamefeature_plugin_types_error_t error;
    return gamefeature_plugin_timers_start_timer(period_us, repeating, id, out, &error) || failed(&error);
}

void gf_release_timer(gf_timer timer) { gamefeature_plugin_timers_timer_drop_own(timer); }

/* ---- Init-state names: batches number states from 1 in the world's order (0: none) ---- */

static gamefeature_plugin_init_states_list_init_state_t states;
static bool states_known;

static gf_str state_name(uint8_t ordinal) {
    if (!states_known) {
        gamefeature_plugin_init_states_states(&states);
        states_known = true;
    }
    if (ordinal == 0 || ordinal > states.len) return (gf_str){"", 0};
    return str_of(&states.ptr[ordinal - 1]);
}

/* printf's lines reach the plugin's log as they are written: stdout is not a terminal, so wasi-libc would
 * otherwise buffer them in blocks, and a plugin never exits to flush them. */
__attribute__((constructor)) static void line_buffered_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

/* ---- Default hooks ---- */

WEAK const char *gf_on_registering(void) { return NULL; }
WEAK const char *gf_on_loading(void) { return NULL; }
WEAK const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode) {
    (void)world_name, (void)net_mode;
    return NULL;
}
WEAK void gf_on_activated(void) {}
WEAK bool gf_on_deactivating(void) { return true; }
WEAK bool gf_poll_deactivation(void) { return true; }
WEAK void gf_on_unloading(void) {}
WEAK void gf_on_unregistering(void) {}
WEAK size_t gf_snapshot(uint8_t *state, size_t capacity) {
    (void)state, (void)capacity;
    return 0;
}
WEAK const char *gf_restore(const uint8_t *state, size_t len) {
    (void)state, (void)len;
    return NULL;
}
WEAK void gf_on_extension_event(uint32_t handler, gf_actor actor, gf_str event) { (void)handler, (void)actor, (void)event; }
WEAK bool gf_can_change_init_state(gf_actor actor, gf_str feature, gf_str current, gf_str desired) {
    (void)actor, (void)feature, (void)current, (void)desired;
    return true;
}
WEAK void gf_handle_change_init_state(gf_actor actor, gf_str feature, gf_str current, gf_str desired) {
    (void)actor, (void)feature, (void)current, (void)desired;
}
WEAK void gf_check_default_initialization(gf_actor actor, gf_str feature) {
    defer(actor, feature, GAMEFEATURE_PLUGIN_INIT_STATES_CHAIN_WORK_CONTINUE_CHAIN);
}
WEAK void gf_on_init_state_changed(uint32_t subscription, gf_actor actor, gf_str feature, gf_str state) {
    (void)subscription, (void)actor, (void)feature, (void)state;
}
WEAK void gf_on_timer(uint32_t timer, uint32_t times, uint64_t frame) { (void)timer, (void)times, (void)frame; }
WEAK void gf_on_property_changed(uint32_t watch, gf_actor actor, const gf_value *old_value, const gf_value *new_value) {
    (void)watch, (void)actor, (void)old_value, (void)new_value;
}
WEAK void gf_on_replicated(gf_actor actor, gf_str component, gf_str property, const gf_value *old_value,
                           const gf_value *new_value) {
    (void)actor, (void)component, (void)property, (void)old_value, (void)new_value;
}

/* ---- Deferred registrations, events and chain walks: sent in one host call each when the current callback
 * returns ---- */

/* As the parallel lists the batch imports take. Registration i: feature deferred_names[registration_features[i]] of
 * registration_actors[i], implemented by deferred_names[registration_implementers[i]]. Event i:
 * deferred_names[event_indices[i]] about event_actors[i]. Request i: request_works[i] for feature
 * deferred_names[request_features[i]] of request_actors[i]. */
static uint64_t *registration_actors;
static uint32_t *registration_features, *registration_implementers;
static size_t registrations_len, registrations_capacity;
static uint64_t *event_actors;
static uint32_t *event_indices;
static size_t events_len, events_capacity;
static uint64_t *request_actors;
static uint32_t *request_features;
static gamefeature_plugin_init_states_chain_work_t *request_works;
static size_t requests_len, requests_capacity;
/* Each name once; the registrations and requests name them by index. */
static game_feature_string_t *deferred_names;
static size_t deferred_names_len, deferred_names_capacity;

/* Makes room for one more `size`-byte item in `*items`; false when memory runs out. */
static bool room_for_one(void **items, size_t *capacity, size_t len, size_t size) {
    if (len < *capacity) return true;
    size_t grown = *capacity ? *capacity * 2 : 16;
    void *moved = realloc(*items, grown * size);
    if (moved == NULL) return false;
    *items = moved;
    *capacity = grown;
    return true;
}

/* Makes room for one more entry in two or three (`third` NULL: two) parallel lists sharing `*capacity`; false when
 * memory runs out. */
static bool room_for_one_entry(void **first, size_t first_size, void **second, size_t second_size, void **third,
                               size_t third_size, size_t *capacity, size_t len) {
    if (len < *capacity) return true;
    size_t grown = *capacity;
    /* Each list grows to the same capacity; the shared one is raised once all of them have grown. */
    if (!room_for_one(first, &grown, len, first_size)) return false;
    grown = *capacity;
    if (!room_for_one(second, &grown, len, second_size)) return false;
    if (third != NULL) {
        grown = *capacity;
        if (!room_for_one(third, &grown, len, third_size)) return false;
    }
    *capacity = grown;
    return true;
}

/* The index of `name` among the deferred names, added (copied) if new; false when memory runs out. */
static bool deferred_name(gf_str name, uint32_t *index) {
    size_t i = 0;
    /* A plugin defers a handful of names: a scan finds one. */
    while (i < deferred_names_len &&
           !(deferred_names[i].len == name.len && memcmp(deferred_names[i].ptr, name.ptr, name.len) == 0)) {
        i++;
    }
    if (i == deferred_names_len) {
        if (!room_for_one((void **)&deferred_names, &deferred_names_capacity, deferred_names_len,
                          sizeof *deferred_names)) {
            return false;
        }
        uint8_t *copy = malloc(name.len ? name.len : 1);
        if (copy == NULL) return false;
        memcpy(copy, name.ptr, name.len);
        deferred_names[deferred_names_len++] = (game_feature_string_t){copy, name.len};
    }
    *index = (uint32_t)i;
    return true;
}

static void defer(gf_actor actor, gf_str feature, gamefeature_plugin_init_states_chain_work_t work) {
    uint32_t index;
    if (!deferred_name(feature, &index) ||
        !room_for_one_entry((void **)&request_actors, sizeof *request_actors, (void **)&request_features,
                            sizeof *request_features, (void **)&request_works, sizeof *request_works,
                            &requests_capacity, requests_len)) {
        gf_warn("could not defer a walk of %.*s on actor %llu: out of memory", (int)feature.len, feature.ptr,
                (unsigned long long)actor);
        return;
    }
    request_actors[requests_len] = actor;
    request_features[requests_len] = index;
    request_works[requests_len++] = work;
}

void gf_defer_register_feature(gf_actor actor, gf_str feature, gf_str implementer) {
    uint32_t feature_index, implementer_index;
    if (!deferred_name(feature, &feature_index) || !deferred_name(implementer, &implementer_index) ||
        !room_for_one_entry((void **)&registration_actors, sizeof *registration_actors,
                            (void **)&registration_features, sizeof *registration_features,
                            (void **)&registration_implementers, sizeof *registration_implementers,
                            &registrations_capacity, registrations_len)) {
        gf_warn("could not defer registering %.*s on actor %llu: out of memory", (int)feature.len, feature.ptr,
                (unsigned long long)actor);
        return;
    }
    registration_actors[registrations_len] = actor;
    registration_features[registrations_len] = feature_index;
    registration_implementers[registrations_len++] = implementer_index;
}

void gf_defer_send_event(gf_actor actor, gf_str event) {
    uint32_t index;
    if (!deferred_name(event, &index) ||
        !room_for_one_entry((void **)&event_actors, sizeof *event_actors, (void **)&event_indices,
                            sizeof *event_indices, NULL, 0, &events_capacity, events_len)) {
        gf_warn("could not defer sending %.*s about actor %llu: out of memory", (int)event.len, event.ptr,
                (unsigned long long)actor);
        return;
    }
    event_actors[events_len] = actor;
    event_indices[events_len++] = index;
}

void gf_defer_continue_chain(gf_actor actor, gf_str feature) {
    defer(actor, feature, GAMEFEATURE_PLUGIN_INIT_STATES_CHAIN_WORK_CONTINUE_CHAIN);
}

void gf_defer_check_default_initialization(gf_actor actor, gf_str feature) {
    defer(actor, feature, GAMEFEATURE_PLUGIN_INIT_STATES_CHAIN_WORK_CHECK_OTHERS_THEN_CONTINUE);
}

/* Writes why the first refused entry of a deferred batch was refused, and how many more were, into `why` and
 * `others`: one warning line however many were refused, since each line is a host call. Not into last_error: the
 * plugin's own last refusal stays what gf_last_error() says. */
static void first_refused(const gamefeature_plugin_types_error_t *first, size_t refused, const char *what, char *why,
                          size_t why_size, char *others, size_t others_size) {
    describe(first, why, why_size);
    others[0] = '\0';
    if (refused > 1) snprintf(others, others_size, " (and %zu more deferred %s refused)", refused - 1, what);
}

/* Sends the deferred registrations, then the deferred events, then the deferred walks; every export calls it before
 * it returns. */
static void send_deferred(void) {
    if (registrations_len == 0 && events_len == 0 && requests_len == 0) return;
    game_feature_list_string_t names = {deferred_names, deferred_names_len};
    char why[256], others[64];
    if (registrations_len > 0) {
        game_feature_list_u64_t actors = {registration_actors, registrations_len};
        game_feature_list_u32_t features = {registration_features, registrations_len};
        game_feature_list_u32_t implementers = {registration_implementers, registrations_len};
        gamefeature_plugin_init_states_list_tuple2_u32_error_t refused = {0};
        gamefeature_plugin_init_states_register_features(&actors, &features, &implementers, &names, &refused);
        if (refused.len > 0 && refused.ptr[0].f0 < registrations_len) {
            size_t i = refused.ptr[0].f0;
            const game_feature_string_t *feature = &deferred_names[registration_features[i]];
            first_refused(&refused.ptr[0].f1, refused.len, "registrations", why, sizeof why, others, sizeof others);
            gf_warn("could not register %.*s on actor %llu: %s%s", (int)feature->len, (const char *)feature->ptr,
                    (unsigned long long)registration_actors[i], why, others);
        }
        gamefeature_plugin_init_states_list_tuple2_u32_error_free(&refused);
    }
    if (events_len > 0) {
        game_feature_list_u64_t actors = {event_actors, events_len};
        game_feature_list_u32_t events = {event_indices, events_len};
        gamefeature_plugin_components_list_tuple2_u32_error_t refused = {0};
        gamefeature_plugin_components_send_extension_events(&actors, &events, &names, &refused);
        if (refused.len > 0 && refused.ptr[0].f0 < events_len) {
            size_t i = refused.ptr[0].f0;
            const game_feature_string_t *event = &deferred_names[event_indices[i]];
            first_refused(&refused.ptr[0].f1, refused.len, "events", why, sizeof why, others, sizeof others);
            gf_warn("could not send %.*s about actor %llu: %s%s", (int)event->len, (const char *)event->ptr,
                    (unsigned long long)event_actors[i], why, others);
        }
        gamefeature_plugin_components_list_tuple2_u32_error_free(&refused);
    }
    if (requests_len > 0) {
        game_feature_list_u64_t actors = {request_actors, requests_len};
        game_feature_list_u32_t features = {request_features, requests_len};
        gamefeature_plugin_init_states_list_chain_work_t works = {request_works, requests_len};
        gamefeature_plugin_init_states_list_tuple2_u32_error_t refused = {0};
        gamefeature_plugin_init_states_queue_chain_requests(&actors, &features, &works, &names, &refused);
        if (refused.len > 0 && refused.ptr[0].f0 < requests_len) {
            size_t i = refused.ptr[0].f0;
            const char *what = request_works[i] == GAMEFEATURE_PLUGIN_INIT_STATES_CHAIN_WORK_CONTINUE_CHAIN
                                   ? "continue the chain of"
                                   : "check the default initialization of";
            const game_feature_string_t *feature = &deferred_names[request_features[i]];
            first_refused(&refused.ptr[0].f1, refused.len, "walks", why, sizeof why, others, sizeof others);
            gf_warn("could not %s %.*s on actor %llu: %s%s", what, (int)feature->len, (const char *)feature->ptr,
                    (unsigned long long)request_actors[i], why, others);
        }
        gamefeature_plugin_init_states_list_tuple2_u32_error_free(&refused);
    }
    /* The SDK allocated the names (an empty one too, which game_feature_string_free would not free). */
    for (size_t i = 0; i < deferred_names_len; i++) free(deferred_names[i].ptr);
    registrations_len = events_len = requests_len = deferred_names_len = 0;
}

/* ---- Exports: arguments belong to the callee, so each is freed after its fan-out; what the hooks deferred is
 * sent before each returns ---- */

static bool fallible(const char *message, game_feature_string_t *err) {
    /* The message first: it may be gf_last_error(), which the hook's own refusals wrote. */
    if (message != NULL) game_feature_string_dup(err, message);
    send_deferred();
    return message == NULL;
}

bool exports_gamefeature_plugin_lifecycle_on_registering(game_feature_string_t *err) {
    return fallible(gf_on_registering(), err);
}
bool exports_gamefeature_plugin_lifecycle_on_loading(game_feature_string_t *err) {
    return fallible(gf_on_loading(), err);
}
bool exports_gamefeature_plugin_lifecycle_on_activating(exports_gamefeature_plugin_lifecycle_activation_context_t *context,
                                                        game_feature_string_t *err) {
    const char *message = gf_on_activating(str_of(&context->world_name), context->net_mode);
    exports_gamefeature_plugin_lifecycle_activation_context_free(context);
    return fallible(message, err);
}
void exports_gamefeature_plugin_lifecycle_on_activated(void) {
    gf_on_activated();
    send_deferred();
}
exports_gamefeature_plugin_lifecycle_deactivation_t
exports_gamefeature_plugin_lifecycle_on_deactivating(exports_gamefeature_plugin_lifecycle_activation_context_t *context) {
    exports_gamefeature_plugin_lifecycle_activation_context_free(context);
    bool done = gf_on_deactivating();
    send_deferred();
    return done ? EXPORTS_GAMEFEATURE_PLUGIN_LIFECYCLE_DEACTIVATION_DONE
                : EXPORTS_GAMEFEATURE_PLUGIN_LIFECYCLE_DEACTIVATION_PENDING;
}
exports_gamefeature_plugin_lifecycle_deactivation_t exports_gamefeature_plugin_lifecycle_poll_deactivation(void) {
    bool done = gf_poll_deactivation();
    send_deferred();
    return done ? EXPORTS_GAMEFEATURE_PLUGIN_LIFECYCLE_DEACTIVATION_DONE
                : EXPORTS_GAMEFEATURE_PLUGIN_LIFECYCLE_DEACTIVATION_PENDING;
}
void exports_gamefeature_plugin_lifecycle_on_unloading(void) {
    gf_on_unloading();
    send_deferred();
}
void exports_gamefeature_plugin_lifecycle_on_unregistering(void) {
    gf_on_unregistering();
    send_deferred();
}
/* The most state a plugin may carry across a reload. */
#define GF_SNAPSHOT_CAPACITY (64 * 1024)

bool exports_gamefeature_plugin_lifecycle_snapshot(game_feature_list_u8_t *ret) {
    uint8_t *state = malloc(GF_SNAPSHOT_CAPACITY);
    size_t len = state ? gf_snapshot(state, GF_SNAPSHOT_CAPACITY) : 0;
    send_deferred();
    if (len == 0 || len > GF_SNAPSHOT_CAPACITY) {
        free(state);
        return false;
    }
    ret->ptr = state; /* the canonical ABI's post-return frees it */
    ret->len = len;
    return true;
}
bool exports_gamefeature_plugin_lifecycle_restore(game_feature_list_u8_t *state, game_feature_string_t *err) {
    const char *message = gf_restore(state->ptr, state->len);
    game_feature_list_u8_free(state);
    return fallible(message, err);
}

void exports_gamefeature_plugin_handlers_handle_extension_events(game_feature_list_u32_t *handlers,
                                                                 game_feature_list_u64_t *actors,
                                                                 game_feature_list_u32_t *events,
                                                                 game_feature_list_string_t *names) {
    for (size_t i = 0; i < handlers->len; i++) {
        gf_on_extension_event(handlers->ptr[i], actors->ptr[i], str_of(&names->ptr[events->ptr[i]]));
    }
    send_deferred();
    game_feature_list_u32_free(handlers);
    game_feature_list_u64_free(actors);
    game_feature_list_u32_free(events);
    game_feature_list_string_free(names);
}

/* Event names by the numbers single-event calls carry (numbers below 65,536: a world numbers its names densely
   from 0), asked of the host once each and kept for the instance's life. */
static game_feature_string_t *event_names;
static uint32_t event_names_len;

/* Keeps `name` as the name of `event`; false when it cannot (then the caller frees it). */
static bool keep_event_name(uint32_t event, game_feature_string_t name) {
    if (event >= (1u << 16)) return false;
    if (event >= event_names_len) {
        game_feature_string_t *grown = realloc(event_names, (event + 1) * sizeof *grown);
        if (!grown) return false;
        memset(grown + event_names_len, 0, (event + 1 - event_names_len) * sizeof *grown);
        event_names = grown;
        event_names_len = event + 1;
    }
    event_names[event] = name;
    return true;
}

void exports_gamefeature_plugin_handlers_handle_extension_event(uint32_t handler, uint64_t actor, uint32_t event) {
    if (event < event_names_len && event_names[event].ptr) {
        gf_on_extension_event(handler, actor, str_of(&event_names[event]));
        send_deferred();
        return;
    }
    game_feature_string_t name = {0};
    gamefeature_plugin_components_event_name(event, &name);
    gf_on_extension_event(handler, actor, str_of(&name));
    send_deferred();
    if (!name.ptr || !keep_event_name(event, name)) game_feature_string_free(&name);
}

/* Frees a chain batch's arguments: the export owns them. */
static void free_chain_batch(game_feature_list_u64_t *actors, game_feature_list_u32_t *features,
                             game_feature_list_u8_t *currents, game_feature_list_u8_t *desireds,
                             game_feature_list_string_t *names) {
    game_feature_list_u64_free(actors);
    game_feature_list_u32_free(features);
    game_feature_list_u8_free(currents);
    game_feature_list_u8_free(desireds);
    game_feature_list_string_free(names);
}

void exports_gamefeature_plugin_init_state_callbacks_try_change_init_states(
    game_feature_list_u64_t *actors, game_feature_list_u32_t *features, game_feature_list_u8_t *currents,
    game_feature_list_u8_t *desireds, game_feature_list_string_t *names,
    exports_gamefeature_plugin_init_state_callbacks_chain_facts_t *facts,
    exports_gamefeature_plugin_init_state_callbacks_chain_walks_t *ret) {
    /* The facts serve the Rust SDK's answers without host calls; the C hooks ask the host, which knows a step only
     * once it has applied it: each entry takes one step, and the host asks again about those that moved. */
    exports_gamefeature_plugin_init_state_callbacks_chain_facts_free(facts);
    /* The walks are freed by the post-return function, which frees nothing for an empty list. */
    size_t n = actors->len;
    ret->steps.len = n;
    ret->steps.ptr = n ? malloc(n) : NULL;
    ret->refused.len = 0;
    ret->refused.ptr = n ? malloc(n * sizeof *ret->refused.ptr) : NULL;
    if (n && (!ret->steps.ptr || !ret->refused.ptr)) abort();
    for (size_t i = 0; i < n; i++) {
        /* Unreal's TryToChangeInitState: the decision, then the work of an allowed step. */
        gf_actor actor = actors->ptr[i];
        gf_str feature = str_of(&names->ptr[features->ptr[i]]);
        gf_str current = state_name(currents->ptr[i]), desired = state_name(desireds->ptr[i]);
        bool allowed = gf_can_change_init_state(actor, feature, current, desired);
        if (allowed) gf_handle_change_init_state(actor, feature, current, desired);
        ret->steps.ptr[i] = allowed ? 1 : 0;
        if (!allowed) ret->refused.ptr[ret->refused.len++] = (uint32_t)i;
    }
    if (ret->refused.len == 0) {
        free(ret->refused.ptr);
        ret->refused.ptr = NULL;
    }
    send_deferred();
    free_chain_batch(actors, features, currents, desireds, names);
}

void exports_gamefeature_plugin_init_state_callbacks_check_default_initializations(game_feature_list_u64_t *actors,
                                                                                   game_feature_list_u32_t *features,
                                                                                   game_feature_list_string_t *names) {
    for (size_t i = 0; i < actors->len; i++) {
        gf_check_default_initialization(actors->ptr[i], str_of(&names->ptr[features->ptr[i]]));
    }
    send_deferred();
    game_feature_list_u64_free(actors);
    game_feature_list_u32_free(features);
    game_feature_list_string_free(names);
}

void exports_gamefeature_plugin_init_state_callbacks_on_init_states_changed(game_feature_list_u32_t *ids,
                                                                            game_feature_list_u64_t *actors,
                                                                            game_feature_list_u32_t *features,
                                                                            game_feature_list_u8_t *states_reached,
                                                                            game_feature_list_string_t *names) {
    for (size_t i = 0; i < ids->len; i++) {
        gf_on_init_state_changed(ids->ptr[i], actors->ptr[i], str_of(&names->ptr[features->ptr[i]]),
                                 state_name(states_reached->ptr[i]));
    }
    send_deferred();
    game_feature_list_u32_free(ids);
    game_feature_list_u64_free(actors);
    game_feature_list_u32_free(features);
    game_feature_list_u8_free(states_reached);
    game_feature_list_string_free(names);
}

void exports_gamefeature_plugin_timer_callbacks_on_timers(exports_gamefeature_plugin_timer_callbacks_frame_t *frame,
                                                          game_feature_list_u32_t *ids, game_feature_list_u32_t *counts) {
    for (size_t i = 0; i < ids->len; i++) gf_on_timer(ids->ptr[i], counts->ptr[i], frame->number);
    send_deferred();
    game_feature_list_u32_free(ids);
    game_feature_list_u32_free(counts);
}

void exports_gamefeature_plugin_replication_callbacks_on_replicated(
    game_feature_list_u64_t *actors, game_feature_list_u32_t *components, game_feature_list_u32_t *properties,
    exports_gamefeature_plugin_replication_callbacks_list_option_value_t *olds,
    exports_gamefeature_plugin_replication_callbacks_list_value_t *news, game_feature_list_string_t *names) {
    for (size_t i = 0; i < actors->len; i++) {
        const gf_value *old_value = olds->ptr[i].is_some ? &olds->ptr[i].val : NULL;
        gf_on_replicated(actors->ptr[i], str_of(&names->ptr[components->ptr[i]]), str_of(&names->ptr[properties->ptr[i]]),
                         old_value, &news->ptr[i]);
    }
    send_deferred();
    game_feature_list_u64_free(actors);
    game_feature_list_u32_free(components);
    game_feature_list_u32_free(properties);
    exports_gamefeature_plugin_replication_callbacks_list_option_value_free(olds);
    exports_gamefeature_plugin_replication_callbacks_list_value_free(news);
    game_feature_list_string_free(names);
}

void exports_gamefeature_plugin_property_callbacks_on_properties_changed(
    game_feature_list_u32_t *ids, game_feature_list_u64_t *actors,
    exports_gamefeature_plugin_property_callbacks_list_option_value_t *olds,
    exports_gamefeature_plugin_property_callbacks_list_option_value_t *news) {
    for (size_t i = 0; i < ids->len; i++) {
        const gf_value *old_value = olds->ptr[i].is_some ? &olds->ptr[i].val : NULL;
        const gf_value *new_value = news->ptr[i].is_some ? &news->ptr[i].val : NULL;
        gf_on_property_changed(ids->ptr[i], actors->ptr[i], old_value, new_value);
    }
    send_deferred();
    game_feature_list_u32_free(ids);
    game_feature_list_u64_free(actors);
    exports_gamefeature_plugin_property_callbacks_list_option_value_free(olds);
    exports_gamefeature_plugin_property_callbacks_list_option_value_free(news);
}
