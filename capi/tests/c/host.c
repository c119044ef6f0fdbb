/* A C11 program embedding the gamefeature host the way a C or C++ engine would: it creates a host, loads an
 * experience, spawns a player, steps frames from its own loop, hears the events plugins send, reads the score
 * a plugin keeps, reloads that plugin (the score stays), ends play and frees everything. The test runs it under
 * AddressSanitizer (capi/tests/c_host.rs).
 *
 * Usage: host PLUGINS_DIR CONFIG_FILE CACHE_DIR EXPERIENCE_FILE */
#include <inttypes.h>
#include <stdio.h>

#include "gamefeature.h"

/* Says what failed and frees the error; true when there was none. */
static bool ok(gf_error_t *error, const char *what) {
    if (error == NULL) {
        return true;
    }
    fprintf(stderr, "%s failed (kind %d): %s\n", what, (int)gf_error_kind(error), gf_error_message(error));
    gf_error_delete(error);
    return false;
}

/* Steps `frames` frames of 1/30 s, printing the events plugins sent; returns how many there were. */
static int play(gf_host_t *host, int frames) {
    int heard = 0;
    for (int frame = 0; frame < frames; frame++) {
        if (!ok(gf_host_step(host, 33333), "gf_host_step")) {
            return -1;
        }
        gf_event_t event;
        while (gf_host_next_event(host, &event)) {
            printf("heard %s on actor %" PRIu64 "\n", event.name, event.actor);
            heard++;
        }
    }
    return heard;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s PLUGINS_DIR CONFIG_FILE CACHE_DIR EXPERIENCE_FILE\n", argv[0]);
        return 2;
    }
    gf_host_t *host = NULL;
    if (!ok(gf_host_new(argv[1], argv[2], argv[3], &host), "gf_host_new")) {
        return 1;
    }
    /* The game's own class: its hero is a Character, so what plugins add to characters, it gets. */
    if (!ok(gf_host_declare_class(host, "HeroCharacter", "Character"), "gf_host_declare_class") ||
        !ok(gf_host_load(host, argv[4]), "gf_host_load")) {
        gf_host_delete(host);
        return 1;
    }
    gf_player_t player;
    if (!ok(gf_host_spawn_player(host, NULL, &player), "gf_host_spawn_player")) {
        gf_host_delete(host);
        return 1;
    }
    int heard = play(host, 90);
    int64_t before = 0;
    if (heard < 0 || !ok(gf_host_get_integer(host, player.player_state, "ScoreComponent", "score", &before), "score")) {
        gf_host_delete(host);
        return 1;
    }
    printf("score after 3 s: %" PRId64 "\n", before);

    /* One of the game's own entities as an actor, then gone; gone twice is an error the game can match on. */
    uint64_t prop = 0;
    if (!ok(gf_host_spawn_actor(host, "Actor", &prop), "gf_host_spawn_actor") ||
        !ok(gf_host_destroy_actor(host, prop), "gf_host_destroy_actor")) {
        gf_host_delete(host);
        return 1;
    }
    gf_error_t *twice = gf_host_destroy_actor(host, prop);
    printf("destroyed twice: %s\n", gf_error_kind(twice) == GF_ERROR_NOT_FOUND ? "not found" : "unexpected");
    gf_error_delete(twice);

    /* A property that is not there is an error the game can match on. */
    int64_t nothing = 0;
    gf_error_t *missing = gf_host_get_integer(host, player.pawn, "NoSuchComponent", "x", &nothing);
    printf("missing property: %s\n", gf_error_kind(missing) == GF_ERROR_NOT_FOUND ? "not found" : "unexpected");
    gf_error_delete(missing);

    /* A class whose parent is not there is refused by the call that declares it. */
    gf_error_t *orphan = gf_host_declare_class(host, "Orphan", "NoSuchParent");
    printf("class with an unknown parent: %s\n", gf_error_kind(orphan) == GF_ERROR_INVALID ? "invalid" : "unexpected");
    gf_error_delete(orphan);

    /* Reloading a plugin the world does not play is the caller's mistake: no plugin is blamed. */
    gf_error_t *nobody = gf_host_reload(host, "nobody");
    printf("reload of nobody: %s, blamed on %s\n",
           gf_error_kind(nobody) == GF_ERROR_NOT_FOUND ? "not found" : "unexpected",
           gf_error_plugin(nobody) == NULL ? "no plugin" : gf_error_plugin(nobody));
    gf_error_delete(nobody);

    if (!ok(gf_host_reload(host, "score-keeper"), "gf_host_reload") || play(host, 45) < 0) {
        gf_host_delete(host);
        return 1;
    }
    int64_t after = 0;
    if (!ok(gf_host_get_integer(host, player.player_state, "ScoreComponent", "score", &after), "score")) {
        gf_host_delete(host);
        return 1;
    }
    printf("score 1.5 s after the reload: %" PRId64 "\n", after);
    if (!ok(gf_host_end(host, "the game is over"), "gf_host_end")) {
        gf_host_delete(host);
        return 1;
    }
    size_t failures = gf_host_failure_count(host);
    for (size_t i = 0; i < failures; i++) {
        printf("failure: %s\n", gf_host_failure(host, i));
    }
    gf_host_delete(host);
    printf("events heard: %d, failures: %zu\n", heard, failures);
    return heard > 0 && before >= 2 && after > before && failures == 0 ? 0 : 3;
}
