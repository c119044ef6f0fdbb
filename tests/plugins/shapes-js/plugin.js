// Calls every shape of the WIT through the JavaScript helper and logs what came back, one line per shape, in
// the same words as tests/plugins/shapes-py: the test compares both with what the host knows.

import { Plugin, HostError, assets, components, initStates, log, timers, world } from 'gamefeature';

const shown = (value) => (value === undefined || value === null ? 'none' : String(value));

function errorOf(call) {
  try {
    call();
    return 'no error';
  } catch (error) {
    if (error instanceof HostError) return `error ${error.kind}: ${error.detail}`;
    throw error;
  }
}

export default class Shapes extends Plugin {
  onActivating(context) {
    const say = (line) => log.info(line);
    say(`net mode: ${world.netMode()} ${context.netMode}`);
    say(`world: ${world.name()} ${context.worldName}`);
    const actor = world.spawnActor('Pawn');
    this.actor = actor;
    say(`class: ${world.actorClass(actor)}, is an Actor: ${world.isA(actor, 'Actor')}`);
    say(`pawns: ${world.actorsOfClass('Pawn').length}`);
    say(`role: ${world.localRole(actor)}, authority: ${world.hasAuthority(actor)}`);
    say(`locally controlled: ${world.isLocallyControlled(actor)}`);
    world.setRelevancy(actor, ['red', 'blue']);
    world.setRelevancy(actor, 'owner-only');
    say(`player groups: ${errorOf(() => world.setPlayerGroups(actor, ['red'])).split(':')[0]}`);
    this.request = components.requestComponent('Pawn', 'ProbeComponent', { unique: true });
    say(`request: ${this.request.receiver} + ${this.request.component}`);
    say(`components: ${world.componentsOf(actor).join(', ')}`);
    for (const [name, value] of [['b', true], ['i', 4611686018427387905n], ['f', 0.25], ['t', 'h\u00e9llo']]) {
      world.setProperty(actor, 'ProbeComponent', name, value);
      say(`property ${name}: ${shown(world.getProperty(actor, 'ProbeComponent', name))}`);
    }
    say(`property missing: ${shown(world.getProperty(actor, 'ProbeComponent', 'missing'))}`);
    this.watch = components.watchProperty(actor, 'ProbeComponent', 'i', 9);
    say(`watch id: ${this.watch.id}`);
    world.setProperty(actor, 'ProbeComponent', 'i', 5n);
    try {
      world.setProperty(actor, 'ProbeComponent', 'n', -5n);
      say(`negative integer: ${world.getProperty(actor, 'ProbeComponent', 'n')}`);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      say(`negative integer refused: ${error.message}`);
    }
    this.handler = components.addExtensionHandler('Pawn', 4);
    say(`handler id: ${this.handler.id}, receiver: ${this.handler.receiver}`);
    this.timer = timers.after(0.5, 3);
    say(`timer id: ${this.timer.id}, frame: ${timers.now().number}`);
    say(`states: ${initStates.states().join(', ')}`);
    initStates.registerFeature(actor, 'Probe', 'ProbeComponent');
    say(`feature state: ${shown(initStates.featureState(actor, 'Probe'))}`);
    initStates.changeState(actor, 'Probe', initStates.SPAWNED);
    say(`feature state: ${shown(initStates.featureState(actor, 'Probe'))}`);
    say(`all reached: ${initStates.allReached(actor, initStates.SPAWNED)}`);
    say(`all but Probe reached: ${initStates.allReached(actor, initStates.GAMEPLAY_READY, 'Probe')}`);
    this.subscription = initStates.subscribeActor(actor, 6, { feature: 'Probe' });
    say(`subscription id: ${this.subscription.id}`);
    initStates.continueChain(actor, 'Probe');
    // Deferred registrations go in one call when this hook returns, before the deferred walks: Probe's again (it
    // keeps its state), and two of a component the actor lacks, refused in one warning.
    initStates.deferRegisterFeature(actor, 'Probe', 'ProbeComponent');
    initStates.deferRegisterFeature(actor, 'Extra', 'NoSuchComponent');
    initStates.deferRegisterFeature(actor, 'Extra2', 'NoSuchComponent');
    // The deferred walks go in one call: Probe's is the walk already asked for (walked once); the two of a feature
    // the actor lacks are refused, in one warning.
    initStates.deferContinueChain(actor, 'Probe');
    initStates.deferContinueChain(actor, 'Missing');
    initStates.deferCheckDefaultInitialization(actor, 'Missing');
    // Deferred events go in one call, between the registrations and the walks: two about an actor that does not
    // exist, refused in one warning.
    components.deferSendEvent(999999n, 'Lost');
    components.deferSendEvent(999999n, 'Lost');
    say(errorOf(() => world.getProperty(999999n, 'ProbeComponent', 'i')));
    say(errorOf(() => assets.read('nope')));
    say(errorOf(() => world.spawnActor('NoSuchClass')));
    say(errorOf(() => components.addExtensionHandler('Actor', 5)));
    this.handler.release();
    say(`released: ${this.handler.released}`);
  }

  onExtensionEvent(handler, actor, event) {
    log.info(`event ${handler} ${event} ${actor === this.actor ? 'probe' : actor}`);
  }

  onPropertyChanged(watch, actor, oldValue, newValue) {
    log.info(`watch ${watch}: ${shown(oldValue)} -> ${shown(newValue)}`);
  }

  canChangeInitState(actor, feature, current, desired) {
    log.info(`may ${feature} go ${shown(current)} -> ${desired}?`);
    return desired !== initStates.GAMEPLAY_READY;
  }

  handleChangeInitState(actor, feature, current, desired) {
    log.info(`${feature} goes ${shown(current)} -> ${desired}`);
  }

  onInitStateChanged(subscription, actor, feature, state) {
    log.info(`init ${subscription}: ${feature} ${state}`);
  }

  onTimer(timer, times, frame) {
    log.info(`timer ${timer} x${times}`);
  }
}
