// Write game-feature plugins for a gamefeature host in JavaScript.
//
// A plugin is the default export of its `plugin.js`: a class extending `Plugin`, whose hooks all have
// defaults, so a plugin overrides only what it needs:
//
//     import { Plugin, components, log } from 'gamefeature';
//
//     export default class Hello extends Plugin {
//       onActivating(context) {
//         log.info(`hello, ${context.worldName}`);
//         this.heroes = components.addExtensionHandler('Character', 1);
//       }
//       onExtensionEvent(handler, actor, event) {
//         log.info(`${event} for actor ${actor}`);
//       }
//     }
//
// `gfhost build` turns the folder into a component (componentize-js, with this library as the package
// `gamefeature`). The host creates one instance of the plugin per world: the object's fields are per-world state.
//
// The host delivers callbacks in batches (parallel lists, for speed); this library fans each batch out into one
// method call per event, per init-state step, per timer. Actor ids are BigInts (they are 64-bit). Host calls
// that fail throw a `HostError`, whose `kind` is the WIT error's case ('denied', 'unknown-actor', ...).
// Handles (extension handlers, component requests, subscriptions, watches, timers) are objects: keep them while
// they should apply, and `release()` them to undo. A fallible hook (`onRegistering`, `onLoading`,
// `onActivating`, `restore`) fails the plugin in that world when it throws; the message is shown in the report.
//
// Every call has a deadline: never wait in a hook. `console.log` works (lines reach the plugin's log).

import * as hostLog from 'gamefeature:plugin/log@0.2.0';
import * as actors from 'gamefeature:plugin/actors@0.2.0';
import * as hostAssets from 'gamefeature:plugin/assets@0.2.0';
import * as hostComponents from 'gamefeature:plugin/components@0.2.0';
import * as hostInitStates from 'gamefeature:plugin/init-states@0.2.0';
import * as hostTimers from 'gamefeature:plugin/timers@0.2.0';

/** A host call refused: `kind` is the WIT error's case, `detail` what it carries (an actor id or a text). */
export class HostError extends Error {
  constructor(kind, detail) {
    super(`${kind}: ${detail}`);
    this.name = 'HostError';
    this.kind = kind;
    this.detail = detail;
  }
}

function call(fn, ...args) {
  try {
    return fn(...args);
  } catch (error) {
    const payload = error && error.payload;
    if (payload && typeof payload.tag === 'string') throw new HostError(payload.tag, payload.val);
    throw error;
  }
}

const MAX_INTEGER = (1n << 63n) - 1n;

/**
 * An integer property value. componentize-js 0.23 cannot lower a negative 64-bit integer (its s64 lowering
 * aborts the instance), so one is refused here with an exception the plugin can catch instead. Reading
 * negative integers works.
 */
function integer(value) {
  if (value < 0n || value > MAX_INTEGER) {
    throw new RangeError(`integer ${value} cannot be sent: componentize-js sends integers from 0 to 2^63-1 only`);
  }
  return { tag: 'integer', val: value };
}

/**
 * A property value as JavaScript sees it, the same way both ways: boolean, BigInt for an integer (they are
 * 64-bit; write `5n`), number for a float, string.
 */
function toWit(value) {
  switch (typeof value) {
    case 'boolean': return { tag: 'boolean', val: value };
    case 'bigint': return integer(value);
    case 'number': return { tag: 'float', val: value };
    case 'string': return { tag: 'text', val: value };
    default: throw new TypeError(`a property value is a boolean, bigint, number or string, not ${typeof value}`);
  }
}

function fromWit(value) {
  return value === undefined || value === null ? undefined : value.val;
}

/** A host handle you keep while it should apply; `release()` undoes it (releasing twice does nothing). */
export class Handle {
  #resource;
  constructor(resource) {
    this.#resource = resource;
  }
  get resource() {
    return this.#resource;
  }
  get released() {
    return this.#resource === undefined;
  }
  release() {
    const resource = this.#resource;
    this.#resource = undefined;
    if (resource !== undefined) resource[Symbol.dispose]();
  }
}

/** A handle tagged with the number the plugin gave it. */
class TaggedHandle extends Handle {
  get id() {
    return this.resource.id();
  }
}

export class ExtensionHandler extends TaggedHandle {
  get receiver() {
    return this.resource.receiver();
  }
}
export class ComponentRequest extends Handle {
  get receiver() {
    return this.resource.receiver();
  }
  get component() {
    return this.resource.component();
  }
}
export class PropertyWatch extends TaggedHandle {}
export class Subscription extends TaggedHandle {}
export class Timer extends TaggedHandle {}

/** Logging into the host's log; the host tags each line with the plugin's name. */
export const log = {
  enabled: (level) => hostLog.enabled(level),
  trace: (message) => hostLog.log('trace', String(message)),
  debug: (message) => hostLog.log('debug', String(message)),
  info: (message) => hostLog.log('info', String(message)),
  warn: (message) => hostLog.log('warn', String(message)),
  error: (message) => hostLog.log('error', String(message)),
};

/** Queries about the plugin's world: its net mode, actors, classes and properties. */
export const world = {
  netMode: () => actors.currentNetMode(),
  name: () => actors.worldName(),
  actorClass: (actor) => call(actors.actorClass, BigInt(actor)),
  isA: (actor, className) => call(actors.isA, BigInt(actor), className),
  actorsOfClass: (className) => Array.from(call(actors.actorsOfClass, className)),
  hasAuthority: (actor) => call(actors.hasAuthority, BigInt(actor)),
  localRole: (actor) => call(actors.localRole, BigInt(actor)),
  isLocallyControlled: (actor) => call(actors.isLocallyControlled, BigInt(actor)),
  componentsOf: (actor) => call(actors.componentsOf, BigInt(actor)),
  /** A component's property, or `undefined` when unset. */
  getProperty: (actor, component, name) => fromWit(call(actors.getProperty, BigInt(actor), component, name)),
  /** Writes a component's property; needs `write-properties` for the component class. */
  setProperty: (actor, component, name, value) =>
    call(actors.setProperty, BigInt(actor), component, name, toWit(value)),
  /** Spawns an actor owned by this plugin; needs `spawn-actors`. */
  spawnActor: (className, receiver = true) => call(actors.spawnActor, className, receiver),
  destroyActor: (actor) => call(actors.destroyActor, BigInt(actor)),
  /**
   * Whom a server replicates `actor` to, besides its own player's client: 'always' (the default), 'owner-only',
   * or an array of groups (the players put in one of them with `setPlayerGroups`); needs `relevancy`.
   */
  setRelevancy: (actor, relevancy) => call(actors.setRelevancy, BigInt(actor), relevancyToWit(relevancy)),
  /** Puts the player `player` belongs to in these relevancy groups, in place of its others; needs `relevancy`. */
  setPlayerGroups: (player, groups) => call(actors.setPlayerGroups, BigInt(player), Array.from(groups)),
};

function relevancyToWit(relevancy) {
  if (relevancy === 'always' || relevancy === 'owner-only') {
    return { tag: relevancy };
  }
  if (Array.isArray(relevancy)) {
    return { tag: 'groups', val: relevancy };
  }
  throw new TypeError(`relevancy is 'always', 'owner-only' or an array of groups, not ${relevancy}`);
}

/** The assets of the bundles the world loaded. */
export const assets = {
  read: (name) => call(hostAssets.readAsset, name),
  readText: (name) => new TextDecoder().decode(call(hostAssets.readAsset, name)),
};

/** The component manager: requests, extension handlers, extension events and property watches. */
export const components = {
  RECEIVER_ADDED: 'ReceiverAdded',
  RECEIVER_REMOVED: 'ReceiverRemoved',
  EXTENSION_ADDED: 'ExtensionAdded',
  EXTENSION_REMOVED: 'ExtensionRemoved',
  GAME_ACTOR_READY: 'GameActorReady',
  /** Delivers events about receivers of `receiver` (or a subclass) to `onExtensionEvent`, tagged `handler`. */
  addExtensionHandler: (receiver, handler) =>
    new ExtensionHandler(call(hostComponents.addExtensionHandler, receiver, handler)),
  /** Asks for `component` on every actor of class `receiver` (or a subclass) while the handle lives. */
  requestComponent: (receiver, component, { unique = false } = {}) =>
    new ComponentRequest(call(hostComponents.addComponentRequest, receiver, component, { addUnique: unique })),
  /** First use of a lazily created component: true when it was created now. */
  ensureComponent: (actor, component) => call(hostComponents.ensureComponent, BigInt(actor), component),
  /** Calls `onPropertyChanged`, tagged `watch`, whenever the property changes. */
  watchProperty: (actor, component, name, watch) =>
    new PropertyWatch(call(hostComponents.watchProperty, BigInt(actor), component, name, watch)),
  /** Sends a custom event to the handlers of the actor's class chain; needs `send-events`. */
  sendEvent: (actor, event) => call(hostComponents.sendExtensionEvent, BigInt(actor), event),
  /**
   * `sendEvent`, sent with one host call for every event deferred when the current callback returns (after the
   * deferred registrations, before the deferred walks). The host queues an event for its handlers either way, so
   * deferring changes only when in the callback it is queued, and how a refusal is told: logged as a warning, not
   * thrown. Cheaper for a callback sending an event about each actor of a batch.
   */
  deferSendEvent: (actor, event) => {
    const id = actorId(actor);
    const index = deferredName(event, 'event name');
    deferred.events.actors.push(id);
    deferred.events.events.push(index);
  },
  addReceiver: (actor) => call(hostComponents.addReceiver, BigInt(actor)),
  removeReceiver: (actor) => call(hostComponents.removeReceiver, BigInt(actor)),
};

let stateNames;

/** The init-state system: features of an actor moving through one ordered list of states. */
export const initStates = {
  SPAWNED: 'InitState.Spawned',
  DATA_AVAILABLE: 'InitState.DataAvailable',
  DATA_INITIALIZED: 'InitState.DataInitialized',
  GAMEPLAY_READY: 'InitState.GameplayReady',
  /** The world's init states, first to last. */
  states: () => (stateNames ??= Array.from(hostInitStates.states())),
  /** A state's name from the number batches carry (0: none). */
  stateName: (ordinal) => (ordinal > 0 ? initStates.states()[ordinal - 1] : undefined),
  registerFeature: (actor, feature, implementer) =>
    call(hostInitStates.registerFeature, BigInt(actor), feature, implementer),
  unregisterFeature: (actor, feature) => call(hostInitStates.unregisterFeature, BigInt(actor), feature),
  featureState: (actor, feature) => call(hostInitStates.featureState, BigInt(actor), feature),
  /** Whether `feature` has reached `state` (false when the feature is unknown). */
  reached: (actor, feature, state) => {
    try {
      return hostInitStates.hasFeatureReached(BigInt(actor), feature, state);
    } catch {
      return false;
    }
  },
  allReached: (actor, state, excluding) =>
    call(hostInitStates.haveAllFeaturesReached, BigInt(actor), state, excluding),
  changeState: (actor, feature, state) => call(hostInitStates.changeFeatureState, BigInt(actor), feature, state),
  /** Queues a walk of `feature`'s chain, as far as its `canChangeInitState` allows. */
  continueChain: (actor, feature) => call(hostInitStates.continueInitStateChain, BigInt(actor), feature),
  /** Unreal's default for a coordinating feature: move every other feature forward, then this one. */
  checkDefaultInitialization: (actor, feature) => {
    call(hostInitStates.checkDefaultInitializationForImplementers, BigInt(actor), feature);
    call(hostInitStates.continueInitStateChain, BigInt(actor), feature);
  },
  /**
   * `registerFeature`, sent with one host call for every registration deferred when the current callback returns,
   * before the deferred walks (which may then walk the features registered). A refusal is logged as a warning, not
   * thrown. For a callback setting up a batch of actors: each of their components registers its feature, as
   * Unreal's components do in `OnRegister`, at the cost of one host call for all of them.
   */
  deferRegisterFeature: (actor, feature, implementer) => {
    const id = actorId(actor);
    const [featureIndex, implementerIndex] = [deferredName(feature), deferredName(implementer, 'class name')];
    const { registrations } = deferred;
    registrations.actors.push(id);
    registrations.features.push(featureIndex);
    registrations.implementers.push(implementerIndex);
  },
  /**
   * `continueChain`, sent with one host call for everything deferred when the current callback returns. The walk
   * runs after the callback either way, so deferring changes only when it is queued (after what the callback
   * queued itself) and how a refusal is told: logged as a warning, not thrown. Cheaper when a callback handling
   * a batch continues many chains.
   */
  deferContinueChain: (actor, feature) => defer(actor, feature, 'continue-chain'),
  /** `checkDefaultInitialization`, deferred as `deferContinueChain` is. */
  deferCheckDefaultInitialization: (actor, feature) => defer(actor, feature, 'check-others-then-continue'),
  /** Calls `onInitStateChanged`, tagged `subscription`, when the actor's features (or `feature`) change. */
  subscribeActor: (actor, subscription, { feature, state, callIfReached = true } = {}) =>
    new Subscription(
      call(hostInitStates.subscribeActor, BigInt(actor), feature, state, callIfReached, subscription),
    ),
  /** Like `subscribeActor`, for `feature` (every feature when `undefined`) of every actor of a class. */
  subscribeClass: (className, feature, subscription, { state, callIfReached = true } = {}) =>
    new Subscription(call(hostInitStates.subscribeClass, className, feature, state, callIfReached, subscription)),
};

// Registrations, events and chain walks deferred until the current callback returns, each name kept once; as the
// parallel lists the batch imports take (registration i: feature names[features[i]] of actors[i], implemented by
// names[implementers[i]]; event i: names[events[i]] about actors[i]; request i: works[i] for feature
// names[features[i]] of actors[i]).
const nothingDeferred = () => ({
  registrations: { actors: [], features: [], implementers: [] },
  events: { actors: [], events: [] },
  requests: { actors: [], features: [], works: [] },
  names: [],
});
let deferred = nothingDeferred();

// Arguments are checked when deferred, so a bad one throws in the hook that passed it rather than when the
// deferred calls are sent.
function actorId(actor) {
  const id = BigInt(actor);
  if (BigInt.asUintN(64, id) !== id) throw new RangeError(`${actor} is not an actor id (0 to 2^64-1)`);
  return id;
}

/** The index of `name` among the deferred names, added if new. */
function deferredName(name, what = 'feature name') {
  if (typeof name !== 'string') throw new TypeError(`a ${what} is a string, not ${typeof name}`);
  const index = deferred.names.indexOf(name);
  return index < 0 ? deferred.names.push(name) - 1 : index;
}

function defer(actor, feature, work) {
  const id = actorId(actor);
  const index = deferredName(feature);
  const { requests } = deferred;
  requests.actors.push(id);
  requests.features.push(index);
  requests.works.push(work);
}

/**
 * The first refused entry's index, why, and how many more were refused: one warning line however many were,
 * since each line is a host call.
 */
function firstRefused(refused, what) {
  const [index, error] = refused[0];
  const others = refused.length === 1 ? '' : ` (and ${refused.length - 1} more deferred ${what} refused)`;
  return [index, new HostError(error.tag, error.val).message, others];
}

/**
 * Sends the deferred registrations, then the deferred events, then the deferred chain walks (every callback does
 * when it returns).
 */
function sendDeferred() {
  const { registrations, events, requests, names } = deferred;
  if (registrations.actors.length === 0 && events.actors.length === 0 && requests.actors.length === 0) return;
  deferred = nothingDeferred();
  if (registrations.actors.length > 0) {
    const { actors, features, implementers } = registrations;
    const refused = hostInitStates.registerFeatures(
      BigUint64Array.from(actors),
      Uint32Array.from(features),
      Uint32Array.from(implementers),
      names,
    );
    if (refused.length > 0) {
      const [index, why, others] = firstRefused(refused, 'registrations');
      log.warn(`could not register ${names[features[index]]} on actor ${actors[index]}: ${why}${others}`);
    }
  }
  if (events.actors.length > 0) {
    const { actors, events: sent } = events;
    const refused = hostComponents.sendExtensionEvents(BigUint64Array.from(actors), Uint32Array.from(sent), names);
    if (refused.length > 0) {
      const [index, why, others] = firstRefused(refused, 'events');
      log.warn(`could not send ${names[sent[index]]} about actor ${actors[index]}: ${why}${others}`);
    }
  }
  if (requests.actors.length > 0) {
    const { actors, features, works } = requests;
    const refused = hostInitStates.queueChainRequests(BigUint64Array.from(actors), Uint32Array.from(features), works, names);
    if (refused.length > 0) {
      const [index, why, others] = firstRefused(refused, 'walks');
      const what = works[index] === 'continue-chain' ? 'continue the chain of' : 'check the default initialization of';
      log.warn(`could not ${what} ${names[features[index]]} on actor ${actors[index]}: ${why}${others}`);
    }
  }
}

/** `exports` with every callback sending the chain walks its hooks deferred when it returns. */
function sendingDeferred(exports) {
  const wrapped = {};
  for (const [name, callbacks] of Object.entries(exports)) {
    wrapped[name] = {};
    for (const [callback, hook] of Object.entries(callbacks)) {
      wrapped[name][callback] = (...args) => {
        try {
          return hook(...args);
        } finally {
          sendDeferred();
        }
      };
    }
  }
  return wrapped;
}

const micros = (seconds) => BigInt(Math.max(0, Math.round(seconds * 1e6)));

/** Work as game time passes: timers fire in the world's frames and reach `onTimer`. Times in seconds. */
export const timers = {
  every: (seconds, timer) => new Timer(call(hostTimers.startTimer, micros(seconds), true, timer)),
  everyFrame: (timer) => new Timer(call(hostTimers.startTimer, 0n, true, timer)),
  after: (seconds, timer) => new Timer(call(hostTimers.startTimer, micros(seconds), false, timer)),
  /** The current frame: `number`, `timeUs`, `deltaUs`. */
  now: () => hostTimers.now(),
};

/**
 * A game feature. Extend it and export the class as `plugin.js`'s default. Lifecycle, in order: `onRegistering`,
 * `onLoading`, `onActivating`, `onActivated`; at end of play `onDeactivating` (and `pollDeactivation` while it
 * returns 'pending'), `onUnloading`, `onUnregistering`.
 */
export class Plugin {
  onRegistering() {}
  onLoading() {}
  onActivating(context) {}
  onActivated() {}
  /** End of play: undo what activation did. Return 'pending' to hold deactivation open. */
  onDeactivating(context) {
    return 'done';
  }
  pollDeactivation() {
    return 'done';
  }
  onUnloading() {}
  onUnregistering() {}
  /** Hot reload: a Uint8Array for the next version, or undefined to start it fresh. */
  snapshot() {
    return undefined;
  }
  /** Hot reload: what the previous version's snapshot returned. Throw to refuse the new version. */
  restore(state) {}
  onExtensionEvent(handler, actor, event) {}
  canChangeInitState(actor, feature, current, desired) {
    return true;
  }
  handleChangeInitState(actor, feature, current, desired) {}
  /** Try to move `feature` forward; by default, walk its chain (deferred: a batch of checks makes one call). */
  checkDefaultInitialization(actor, feature) {
    initStates.deferContinueChain(actor, feature);
  }
  onInitStateChanged(subscription, actor, feature, state) {}
  onTimer(timer, times, frame) {}
  onPropertyChanged(watch, actor, oldValue, newValue) {}
  onReplicated(actor, component, property, oldValue, newValue) {}
}

/** A hook whose failure fails the plugin in this world: what it throws becomes the WIT error string. */
function fallible(hook) {
  try {
    hook();
  } catch (error) {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    if (error instanceof Error && error.stack) log.error(`${message}\n${error.stack}`);
    throw message;
  }
}

/** The world's exports for a plugin class: used by the build's entry module, not by plugins. */
export function exportPlugin(PluginClass) {
  if (typeof PluginClass !== 'function' || !(PluginClass.prototype instanceof Plugin)) {
    throw new TypeError("plugin.js must export a class extending Plugin as its default export");
  }
  let instance;
  const plugin = () => (instance ??= new PluginClass());
  // Event names by the numbers single-event calls carry, asked of the host once each (as many as the host numbers
  // for one instance).
  const eventNames = new Map();
  const MAX_EVENT_NAMES = 4096;
  const name = initStates.stateName;
  const done = (answer) => answer ?? 'done';
  return sendingDeferred({
    lifecycle: {
      onRegistering: () => fallible(() => plugin().onRegistering()),
      onLoading: () => fallible(() => plugin().onLoading()),
      onActivating: (context) => fallible(() => plugin().onActivating(context)),
      onActivated: () => plugin().onActivated(),
      onDeactivating: (context) => done(plugin().onDeactivating(context)),
      pollDeactivation: () => done(plugin().pollDeactivation()),
      onUnloading: () => plugin().onUnloading(),
      onUnregistering: () => plugin().onUnregistering(),
      snapshot: () => plugin().snapshot() ?? undefined,
      restore: (state) => fallible(() => plugin().restore(state)),
    },
    handlers: {
      handleExtensionEvents(handlers, actors, events, names) {
        const p = plugin();
        for (let i = 0; i < handlers.length; i++) p.onExtensionEvent(handlers[i], actors[i], names[events[i]]);
      },
      handleExtensionEvent(handler, actor, event) {
        let name = eventNames.get(event);
        if (name === undefined) {
          name = hostComponents.eventName(event) ?? '';
          if (eventNames.size < MAX_EVENT_NAMES) eventNames.set(event, name);
        }
        plugin().onExtensionEvent(handler, actor, name);
      },
    },
    initStateCallbacks: {
      // The facts serve the Rust SDK's answers without host calls; JavaScript hooks ask the host, which knows a
      // step only once it has applied it: each entry takes one step, and the host asks again about those that moved.
      tryChangeInitStates(actors, features, currents, desireds, names, facts) {
        const p = plugin();
        // Unreal's TryToChangeInitState: the decision, then the work of an allowed step.
        const steps = new Uint8Array(actors.length);
        const refused = [];
        for (let i = 0; i < actors.length; i++) {
          const args = [actors[i], names[features[i]], name(currents[i]), name(desireds[i])];
          const allowed = Boolean(p.canChangeInitState(...args));
          if (allowed) {
            p.handleChangeInitState(...args);
            steps[i] = 1;
          } else {
            refused.push(i);
          }
        }
        return { steps, refused: Uint32Array.from(refused) };
      },
      checkDefaultInitializations(actors, features, names) {
        const p = plugin();
        for (let i = 0; i < actors.length; i++) p.checkDefaultInitialization(actors[i], names[features[i]]);
      },
      onInitStatesChanged(ids, actors, features, states, names) {
        const p = plugin();
        for (let i = 0; i < ids.length; i++) p.onInitStateChanged(ids[i], actors[i], names[features[i]], name(states[i]));
      },
    },
    timerCallbacks: {
      onTimers(frame, ids, counts) {
        const p = plugin();
        for (let i = 0; i < ids.length; i++) p.onTimer(ids[i], counts[i], frame);
      },
    },
    replicationCallbacks: {
      onReplicated(actors, components, properties, olds, news, names) {
        const p = plugin();
        for (let i = 0; i < actors.length; i++) {
          p.onReplicated(actors[i], names[components[i]], names[properties[i]], fromWit(olds[i]), fromWit(news[i]));
        }
      },
    },
    propertyCallbacks: {
      onPropertiesChanged(ids, actors, olds, news) {
        const p = plugin();
        for (let i = 0; i < ids.length; i++) p.onPropertyChanged(ids[i], actors[i], fromWit(olds[i]), fromWit(news[i]));
      },
    },
  });
}
