/* Write game-feature plugins for a gamefeature host in C.
 *
 * `gfhost build` generates the world's bindings (`game_feature.h`, from wit-bindgen's C generator; the same
 * header is committed beside this one, so an editor or `clang --target=wasm32-wasi -fsyntax-only -I guest-sdk/c`
 * needs nothing generated), and compiles them with this helper (`gamefeature.c`) and the plugin's `.c` files;
 * clang's warnings are shown even when the build succeeds. The helper implements every export: it
 * fans the host's batches out into one call per event, per init-state step, per timer, to the `gf_*` hooks
 * below, and frees what the host passed in. Define only the hooks you need: every one has a default (a weak
 * symbol) that does nothing and succeeds.
 *
 * Strings from the host are `gf_str` (pointer and length, not NUL-terminated), valid only during the hook that
 * receives them: copy what you keep. Strings to the host are C strings. `printf` lines reach the plugin's log
 * (stdout is line-buffered).
 * Host calls return `true` on success; on failure `gf_last_error()` says why ("denied: ...", "unknown-actor: 7").
 * Handles (`gf_handler`, `gf_subscription`) are kept while they should apply and released with `gf_release_*`.
 * Every call has a deadline: never wait in a hook. */
#ifndef GAMEFEATURE_H
#define GAMEFEATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "game_feature.h"

typedef struct {
    const char *ptr;
    size_t len;
} gf_str;

typedef uint64_t gf_actor;
typedef gamefeature_plugin_components_own_extension_handler_t gf_handler;
typedef gamefeature_plugin_init_states_own_subscription_t gf_subscription;
typedef gamefeature_plugin_components_own_component_request_t gf_request;
typedef gamefeature_plugin_components_own_property_watch_t gf_watch;
typedef gamefeature_plugin_timers_own_timer_t gf_timer;
typedef gamefeature_plugin_types_value_t gf_value;

/* Whether a host string equals a C string. */
bool gf_str_eq(gf_str s, const char *c);
/* A gf_str of a NUL-terminated string (a literal, say). */
static inline gf_str gf_str_of(const char *c) { return (gf_str){c, strlen(c)}; }

/* The built-in extension events. */
#define GF_RECEIVER_ADDED "ReceiverAdded"
#define GF_RECEIVER_REMOVED "ReceiverRemoved"
#define GF_EXTENSION_ADDED "ExtensionAdded"
#define GF_EXTENSION_REMOVED "ExtensionRemoved"
#define GF_GAME_ACTOR_READY "GameActorReady"

/* Lyra's init states, the host's default order. */
#define GF_SPAWNED "InitState.Spawned"
#define GF_DATA_AVAILABLE "InitState.DataAvailable"
#define GF_DATA_INITIALIZED "InitState.DataInitialized"
#define GF_GAMEPLAY_READY "InitState.GameplayReady"

/* ---- Hooks (define the ones you need) ---- */

/* Fallible lifecycle steps: return NULL on success, or a message that fails the plugin in this world. */
const char *gf_on_registering(void);
const char *gf_on_loading(void);
const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode);
void gf_on_activated(void);
/* End of play: return false to hold deactivation open until gf_poll_deactivation returns true. */
bool gf_on_deactivating(void);
bool gf_poll_deactivation(void);
void gf_on_unloading(void);
void gf_on_unregistering(void);

/* Hot reload: write the state for the next version into `state` (at most `capacity` bytes, 64 KiB) and return
 * its length; 0 (the default) starts the next version fresh. */
size_t gf_snapshot(uint8_t *state, size_t capacity);
/* Hot reload: the previous version's state. Return NULL, or a message that refuses the new version. */
const char *gf_restore(const uint8_t *state, size_t len);

/* An extension event for the handler you numbered `handler`. */
void gf_on_extension_event(uint32_t handler, gf_actor actor, gf_str event);
/* May `feature` of `actor` move from `current` (len 0: none) to `desired`? Default: yes. */
bool gf_can_change_init_state(gf_actor actor, gf_str feature, gf_str current, gf_str desired);
/* The step gf_can_change_init_state just allowed is about to happen: do its work. Default: nothing. */
void gf_handle_change_init_state(gf_actor actor, gf_str feature, gf_str current, gf_str desired);
/* Try to move `feature` forward; by default, walk its chain (deferred: a batch of checks makes one host call). */
void gf_check_default_initialization(gf_actor actor, gf_str feature);
void gf_on_init_state_changed(uint32_t subscription, gf_actor actor, gf_str feature, gf_str state);
void gf_on_timer(uint32_t timer, uint32_t times, uint64_t frame);
/* A watched property changed; NULL: no value. */
void gf_on_property_changed(uint32_t watch, gf_actor actor, const gf_value *old_value, const gf_value *new_value);
/* Rep-notify, on a client: a replicated property this plugin declared went from `old_value` (NULL: none yet) to
 * `new_value`. */
void gf_on_replicated(gf_actor actor, gf_str component, gf_str property, const gf_value *old_value,
                      const gf_value *new_value);

/* ---- Host calls ---- */

/* Why the last host call failed. */
const char *gf_last_error(void);

/* printf-style lines into the host's log. */
void gf_log(gamefeature_plugin_log_level_t level, const char *format, ...) __attribute__((format(printf, 2, 3)));
#define gf_info(...) gf_log(GAMEFEATURE_PLUGIN_LOG_LEVEL_INFO, __VA_ARGS__)
#define gf_warn(...) gf_log(GAMEFEATURE_PLUGIN_LOG_LEVEL_WARN, __VA_ARGS__)

bool gf_add_extension_handler(const char *receiver, uint32_t id, gf_handler *out);
void gf_release_handler(gf_handler handler);

/* Sends a custom event to the handlers of the actor's class chain; needs the send-events permission. */
bool gf_send_event(gf_actor actor, const char *event);
/* gf_send_event, sent with one host call for every event deferred when the current callback returns (after the
 * deferred registrations, before the deferred walks). The host queues an event for its handlers either way, so
 * deferring changes only when in the callback it is queued, and how a refusal is told: logged as a warning, not
 * returned. Cheaper for a callback sending an event about each actor of a batch. */
void gf_defer_send_event(gf_actor actor, gf_str event);

bool gf_register_feature(gf_actor actor, const char *feature, const char *implementer);
/* gf_register_feature, sent with one host call for every registration deferred when the current callback returns,
 * before the deferred walks (which may then walk the features registered). A refusal is logged as a warning, not
 * returned. For a callback setting up a batch of actors: each of their components registers its feature, as
 * Unreal's components do in OnRegister, at the cost of one host call for all of them. */
void gf_defer_register_feature(gf_actor actor, gf_str feature, gf_str implementer);
bool gf_continue_chain(gf_actor actor, const char *feature);
/* gf_continue_chain, sent with one host call for everything deferred when the current callback returns. The walk
 * runs after the callback either way, so deferring changes only when it is queued (after what the callback queued
 * itself) and how a refusal is told: logged as a warning, not returned. Cheaper when a callback handling a batch
 * continues many chains. */
void gf_defer_continue_chain(gf_actor actor, gf_str feature);
/* Unreal's CheckDefaultInitialization of a feature that coordinates the others (every other feature asked to
 * move forward, then this one's chain walked), deferred as gf_defer_continue_chain is. */
void gf_defer_check_default_initialization(gf_actor actor, gf_str feature);
/* Whether `feature` has reached `state` (false when unknown). */
bool gf_reached(gf_actor actor, const char *feature, const char *state);
/* `feature` may be NULL (every feature), `state` NULL (every state). */
bool gf_subscribe_class(const char *class_name, const char *feature, const char *state, bool call_if_reached,
                        uint32_t id, gf_subscription *out);
void gf_release_subscription(gf_subscription subscription);

/* How many actors of a class (or a subclass) there are; 0 when the class is unknown. */
size_t gf_count_actors(const char *class_name);

/* A text asset of the bundles the world loaded, NUL-terminated into `text`: false when it is not there or does
 * not fit in `capacity` bytes (gf_last_error says which). */
bool gf_read_text_asset(const char *name, char *text, size_t capacity);
/* A property as an integer: false when unset, not an integer, or the call failed. */
bool gf_get_integer(gf_actor actor, const char *component, const char *name, int64_t *out);
/* A property as a float: false when unset, not a float, or the call failed. */
bool gf_get_float(gf_actor actor, const char *component, const char *name, double *out);
/* Writes a property (needs `write-properties` for the component class). */
bool gf_set_integer(gf_actor actor, const char *component, const char *name, int64_t value);
bool gf_set_float(gf_actor actor, const char *component, const char *name, double value);
bool gf_set_text(gf_actor actor, const char *component, const char *name, const char *value);
bool gf_has_authority(gf_actor actor);

/* A component on every actor of `receiver` (or a subclass) while the request is held. */
bool gf_request_component(const char *receiver, const char *component, gf_request *out);
void gf_release_request(gf_request request);
/* Calls gf_on_property_changed, tagged `id`, whenever the property changes. */
bool gf_watch_property(gf_actor actor, const char *component, const char *name, uint32_t id, gf_watch *out);
void gf_release_watch(gf_watch watch);
/* Calls gf_on_timer, tagged `id`, every `period_us` of game time (once, unless `repeating`; 0: every frame). */
bool gf_start_timer(uint64_t period_us, bool repeating, uint32_t id, gf_timer *out);
void gf_release_timer(gf_timer timer);

/* Everything else: the world's raw bindings, `gamefeature_plugin_*` in game_feature.h (generated at build time
 * by `gfhost build` from wit/<api>/, one function per WIT function). */

#endif
