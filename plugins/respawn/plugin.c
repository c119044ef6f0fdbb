/* Respawns, written in C with the helper in guest-sdk/c, for the arena: it watches every hero's health; when one
 * reaches zero on the server, a one-shot timer brings the hero back two seconds later with full health, moved to
 * the next corner of the arena (its size from the experience's `arena` asset: `width = 40`, `height = 30`). The
 * game moves the hero's entity because this plugin wrote its Position: without it, a hero that is down stays
 * down. */
#include <gamefeature.h>
#include <stdlib.h>

enum { HEROES = 1, HEALTH = 2, FIRST_RESPAWN = 100 };
enum { MOST_HEROES = 64 };

static const int64_t FULL_HEALTH = 150;
static const uint64_t RESPAWN_US = 2000000;
static const double MARGIN = 3.0;

typedef struct {
    gf_actor hero;
    gf_watch watch;
    bool watching, down;
    gf_timer respawn;
} tracked;

static tracked heroes[MOST_HEROES];
static gf_handler hero_handler;
static double width = 40, height = 30;
static unsigned next_corner, respawned;

/* The arena's size, when the experience gives it. */
static void read_arena(void) {
    char text[256];
    if (!gf_read_text_asset("arena", text, sizeof text)) return;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        double value;
        if (sscanf(line, " width = %lf", &value) == 1) width = value;
        if (sscanf(line, " height = %lf", &value) == 1) height = value;
    }
}

static tracked *find(gf_actor hero) {
    for (int i = 0; i < MOST_HEROES; i++)
        if (heroes[i].watching && heroes[i].hero == hero) return &heroes[i];
    return NULL;
}

static void forget(tracked *t) {
    if (t->down) gf_release_timer(t->respawn);
    gf_release_watch(t->watch);
    *t = (tracked){0};
}

const char *gf_on_activating(gf_str world_name, gamefeature_plugin_types_net_mode_t net_mode) {
    (void)world_name, (void)net_mode;
    read_arena();
    if (!gf_add_extension_handler("HeroCharacter", HEROES, &hero_handler)) return gf_last_error();
    return NULL;
}

void gf_on_extension_event(uint32_t handler, gf_actor hero, gf_str event) {
    (void)handler;
    if (gf_str_eq(event, GF_RECEIVER_ADDED) || gf_str_eq(event, GF_EXTENSION_ADDED)) {
        if (find(hero)) return;
        for (int i = 0; i < MOST_HEROES; i++) {
            if (heroes[i].watching) continue;
            if (!gf_watch_property(hero, "HealthComponent", "health", HEALTH, &heroes[i].watch)) {
                gf_warn("hero %llu: %s", (unsigned long long)hero, gf_last_error());
                return;
            }
            heroes[i] = (tracked){.hero = hero, .watch = heroes[i].watch, .watching = true};
            return;
        }
        gf_warn("more than %d heroes: hero %llu will not respawn", MOST_HEROES, (unsigned long long)hero);
    } else if (gf_str_eq(event, GF_RECEIVER_REMOVED) || gf_str_eq(event, GF_EXTENSION_REMOVED)) {
        tracked *t = find(hero);
        if (t) forget(t);
    }
}

void gf_on_property_changed(uint32_t watch, gf_actor hero, const gf_value *old_value, const gf_value *new_value) {
    (void)watch, (void)old_value;
    tracked *t = find(hero);
    bool dead = new_value && new_value->tag == GAMEFEATURE_PLUGIN_TYPES_VALUE_INTEGER && new_value->val.integer <= 0;
    if (!t || !dead || t->down || !gf_has_authority(hero)) return;
    if (!gf_start_timer(RESPAWN_US, false, FIRST_RESPAWN + (uint32_t)(t - heroes), &t->respawn)) {
        gf_warn("hero %llu: %s", (unsigned long long)hero, gf_last_error());
        return;
    }
    t->down = true;
    gf_info("hero %llu is down; back in 2 s", (unsigned long long)hero);
}

void gf_on_timer(uint32_t timer, uint32_t times, uint64_t frame) {
    (void)times, (void)frame;
    if (timer < FIRST_RESPAWN || timer >= FIRST_RESPAWN + MOST_HEROES) return;
    tracked *t = &heroes[timer - FIRST_RESPAWN];
    if (!t->watching || !t->down) return;
    gf_release_timer(t->respawn);
    t->down = false;
    unsigned corner = next_corner++ % 4;
    double x = corner & 1 ? width - MARGIN : MARGIN, y = corner & 2 ? height - MARGIN : MARGIN;
    if (!gf_set_float(t->hero, "Position", "x", x) || !gf_set_float(t->hero, "Position", "y", y) ||
        !gf_set_integer(t->hero, "HealthComponent", "health", FULL_HEALTH)) {
        gf_warn("hero %llu cannot respawn: %s", (unsigned long long)t->hero, gf_last_error());
        return;
    }
    respawned++;
    gf_info("hero %llu is back, at (%.0f, %.0f)", (unsigned long long)t->hero, x, y);
}

bool gf_on_deactivating(void) {
    for (int i = 0; i < MOST_HEROES; i++)
        if (heroes[i].watching) forget(&heroes[i]);
    gf_release_handler(hero_handler);
    gf_info("%u respawn(s) in this match", respawned);
    return true;
}
