"""Calls every shape of the WIT through the Python helper and logs what came back, one line per shape, in the
same words as tests/plugins/shapes-js: the test compares both with what the host knows."""

import gamefeature as gf
from gamefeature import assets, components, init_states, log, timers, world


def shown(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if hasattr(value, "name"):  # an enum
        return value.name.lower().replace("_", "-")
    return str(value)


def error_of(call):
    try:
        call()
        return "no error"
    except gf.HostError as error:
        return f"error {error.case}: {error.detail}"


class Shapes(gf.Plugin):
    def on_activating(self, context):
        say = lambda line: log.info(line)
        say(f"net mode: {shown(world.net_mode())} {shown(context.net_mode)}")
        say(f"world: {world.name()} {context.world_name}")
        actor = world.spawn_actor("Pawn")
        self.actor = actor
        say(f"class: {world.actor_class(actor)}, is an Actor: {shown(world.is_a(actor, 'Actor'))}")
        say(f"pawns: {len(world.actors_of_class('Pawn'))}")
        say(f"role: {shown(world.local_role(actor))}, authority: {shown(world.has_authority(actor))}")
        say(f"locally controlled: {shown(world.is_locally_controlled(actor))}")
        world.set_relevancy(actor, ["red", "blue"])
        world.set_relevancy(actor, "owner-only")
        say(f"player groups: {error_of(lambda: world.set_player_groups(actor, ['red'])).split(':')[0]}")
        self.request = components.request_component("Pawn", "ProbeComponent", unique=True)
        say(f"request: {self.request.receiver} + {self.request.component}")
        say(f"components: {', '.join(world.components_of(actor))}")
        for name, value in [("b", True), ("i", 4611686018427387905), ("f", 0.25), ("t", "h\u00e9llo")]:
            world.set_property(actor, "ProbeComponent", name, value)
            say(f"property {name}: {shown(world.get_property(actor, 'ProbeComponent', name))}")
        say(f"property missing: {shown(world.get_property(actor, 'ProbeComponent', 'missing'))}")
        self.watch = components.watch_property(actor, "ProbeComponent", "i", 9)
        say(f"watch id: {self.watch.id}")
        world.set_property(actor, "ProbeComponent", "i", 5)
        try:
            world.set_property(actor, "ProbeComponent", "n", -5)
            say(f"negative integer: {world.get_property(actor, 'ProbeComponent', 'n')}")
        except ValueError as error:
            say(f"negative integer refused: {error}")
        self.handler = components.add_extension_handler("Pawn", 4)
        say(f"handler id: {self.handler.id}, receiver: {self.handler.receiver}")
        self.timer = timers.after(0.5, 3)
        say(f"timer id: {self.timer.id}, frame: {timers.now().number}")
        say(f"states: {', '.join(init_states.states())}")
        init_states.register_feature(actor, "Probe", "ProbeComponent")
        say(f"feature state: {shown(init_states.feature_state(actor, 'Probe'))}")
        init_states.change_state(actor, "Probe", init_states.SPAWNED)
        say(f"feature state: {shown(init_states.feature_state(actor, 'Probe'))}")
        say(f"all reached: {shown(init_states.all_reached(actor, init_states.SPAWNED))}")
        say(f"all but Probe reached: {shown(init_states.all_reached(actor, init_states.GAMEPLAY_READY, 'Probe'))}")
        self.subscription = init_states.subscribe_actor(actor, 6, feature="Probe")
        say(f"subscription id: {self.subscription.id}")
        init_states.continue_chain(actor, "Probe")
        # Deferred registrations go in one call when this hook returns, before the deferred walks: Probe's again
        # (it keeps its state), and two of a component the actor lacks, refused in one warning.
        init_states.defer_register_feature(actor, "Probe", "ProbeComponent")
        init_states.defer_register_feature(actor, "Extra", "NoSuchComponent")
        init_states.defer_register_feature(actor, "Extra2", "NoSuchComponent")
        # The deferred walks go in one call: Probe's is the walk already asked for (walked once); the two of a
        # feature the actor lacks are refused, in one warning.
        init_states.defer_continue_chain(actor, "Probe")
        init_states.defer_continue_chain(actor, "Missing")
        init_states.defer_check_default_initialization(actor, "Missing")
        # Deferred events go in one call, between the registrations and the walks: two about an actor that does not
        # exist, refused in one warning.
        components.defer_send_event(999999, "Lost")
        components.defer_send_event(999999, "Lost")
        say(error_of(lambda: world.get_property(999999, "ProbeComponent", "i")))
        say(error_of(lambda: assets.read("nope")))
        say(error_of(lambda: world.spawn_actor("NoSuchClass")))
        say(error_of(lambda: components.add_extension_handler("Actor", 5)))
        self.handler.release()
        say(f"released: {shown(self.handler.released)}")

    def on_extension_event(self, handler, actor, event):
        log.info(f"event {handler} {event} {'probe' if actor == self.actor else actor}")

    def on_property_changed(self, watch, actor, old, new):
        log.info(f"watch {watch}: {shown(old)} -> {shown(new)}")

    def can_change_init_state(self, actor, feature, current, desired):
        log.info(f"may {feature} go {shown(current)} -> {desired}?")
        return desired != init_states.GAMEPLAY_READY

    def handle_change_init_state(self, actor, feature, current, desired):
        log.info(f"{feature} goes {shown(current)} -> {desired}")

    def on_init_state_changed(self, subscription, actor, feature, state):
        log.info(f"init {subscription}: {feature} {state}")

    def on_timer(self, timer, times, frame):
        log.info(f"timer {timer} x{times}")
