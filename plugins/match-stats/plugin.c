/* Match statistics, written in C with the helper in guest-sdk/c: an extension handler on every character
 * counts arrivals and departures, another one counts players, an init-state subscription counts heroes reaching
 * GameplayReady (naming the player each one plays for, read from the pawn's Possession), a timer counts the
 * seconds of play, and end of play reports the totals. */
#include <gamefeature.h>

enum { CHARACTERS = 1, PLAYERS = 2, HEROES_READY = 3, SECONDS = 4 };

static gf_handler characters, player_states;
static gf_subscription heroes_ready;
static gf_timer seconds_timer;
static unsigned seconds;
static bool holding;
static unsigned arrived, departed, ready;
static unsigned players;

const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode) {
    (void)net_mode;
    if (!gf_add_extension_handler("Character", CHARACTERS, &characters)) return gf_last_error();
    if (!gf_add_extension_handler("PlayerState", PLAYERS, &player_states)) {
        gf_release_handler(characters);
        return gf_last_error();
    }
    if (!gf_subscribe_class("HeroCharacter", "Hero", GF_GAMEPLAY_READY, true, HEROES_READY, &heroes_ready)) {
        gf_release_handler(player_states);
        gf_release_handler(characters);
        return gf_last_error();
    }
    if (!gf_start_timer(1000000, true, SECONDS, &seconds_timer)) {
        gf_release_timer(seconds_timer);
        gf_release_subscription(heroes_ready);
        gf_release_handler(player_states);
        gf_release_handler(characters);
        return gf_last_error();
    }
    holding = true;
    gf_info("keeping match statistics in %.*s", (int)world_name.len, world_name.ptr);
    return NULL;
}

void gf_on_extension_event(uint32_t handler, gf_actor actor, gf_str event) {
    bool added = gf_str_eq(event, GF_RECEIVER_ADDED) || gf_str_eq(event, GF_EXTENSION_ADDED);
    (void)actor;
    if (handler == PLAYERS) {
        if (added) players++;
    } else if (added) {
        arrived++;
    } else if (gf_str_eq(event, GF_RECEIVER_REMOVED)) {
        departed++;
    }
}

void gf_on_init_state_changed(uint32_t subscription, gf_actor actor, gf_str feature, gf_str state) {
    (void)subscription;
    ready++;
    int64_t player = 0;
    if (!gf_get_integer(actor, "Possession", "player-state", &player)) gf_warn("hero %llu: %s", (unsigned long long)actor, gf_last_error());
    gf_info("hero %llu (player %lld): %.*s reached %.*s", (unsigned long long)actor, (long long)player, (int)feature.len,
            feature.ptr, (int)state.len, state.ptr);
}

void gf_on_timer(uint32_t timer, uint32_t times, uint64_t frame) {
    (void)timer, (void)frame;
    seconds += times;
}

bool gf_on_deactivating(void) {
    gf_info("match over after %u s: %u player(s), %u character(s) arrived, %u left, %u hero(es) ready", seconds,
            players, arrived, departed, ready);
    if (holding) {
        gf_release_timer(seconds_timer);
        gf_release_subscription(heroes_ready);
        gf_release_handler(player_states);
        gf_release_handler(characters);
        holding = false;
    }
    return true;
}
