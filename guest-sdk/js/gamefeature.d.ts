// Type declarations for `gamefeature`, the JavaScript helper library for game-feature plugins (gamefeature.js).
// Editors read them for completion and checking; `gfhost build` does not need them. Actor ids are BigInts
// (64-bit); property values are booleans, BigInts (integers), numbers (floats) or strings.

/** An actor's id in its world. */
export type ActorId = bigint;

/** A property's value: boolean, integer (BigInt), float (number) or text. */
export type PropertyValue = boolean | bigint | number | string;

/** What a world is. */
export type NetMode = 'standalone' | 'dedicated-server' | 'listen-server' | 'client';

/** What an actor is in this world. */
export type NetRole = 'authority' | 'autonomous-proxy' | 'simulated-proxy';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** The world a lifecycle hook runs for. */
export interface ActivationContext {
  worldName: string;
  netMode: NetMode;
}

/** One frame of game time, in microseconds. */
export interface Frame {
  number: bigint;
  timeUs: bigint;
  deltaUs: bigint;
}

/** Whether a plugin has finished deactivating; 'pending' holds end of play open (polled again). */
export type Deactivation = 'done' | 'pending';

/** A host call refused: `kind` is the WIT error's case ('denied', 'unknown-actor', ...). */
export class HostError extends Error {
  constructor(kind: string, detail: unknown);
  readonly kind: string;
  readonly detail: unknown;
}

/** A host handle you keep while it should apply; `release()` undoes it (releasing twice does nothing). */
export class Handle {
  get released(): boolean;
  release(): void;
}

/** A handle tagged with the number the plugin gave it, which the callbacks about it carry. */
declare class NumberedHandle extends Handle {
  get id(): number;
}

export class ExtensionHandler extends NumberedHandle {
  get receiver(): string;
}
export class ComponentRequest extends Handle {
  get receiver(): string;
  get component(): string;
}
export class PropertyWatch extends NumberedHandle {}
export class Subscription extends NumberedHandle {}
export class Timer extends NumberedHandle {}

/** Logging into the host's log; the host tags each line with the plugin's name. */
export const log: {
  enabled(level: LogLevel): boolean;
  trace(message: unknown): void;
  debug(message: unknown): void;
  info(message: unknown): void;
  warn(message: unknown): void;
  error(message: unknown): void;
};

/** Queries about the plugin's world: its net mode, actors, classes and properties. */
export const world: {
  netMode(): NetMode;
  name(): string;
  actorClass(actor: ActorId): string;
  isA(actor: ActorId, className: string): boolean;
  actorsOfClass(className: string): ActorId[];
  hasAuthority(actor: ActorId): boolean;
  localRole(actor: ActorId): NetRole;
  isLocallyControlled(actor: ActorId): boolean;
  componentsOf(actor: ActorId): string[];
  /** A component's property, or `undefined` when unset. */
  getProperty(actor: ActorId, component: string, name: string): PropertyValue | undefined;
  /** Writes a component's property; needs `write-properties` for the component class. Integers: 0 to 2^63-1. */
  setProperty(actor: ActorId, component: string, name: string, value: PropertyValue): void;
  /** Spawns an actor owned by this plugin; needs `spawn-actors`. */
  spawnActor(className: string, receiver?: boolean): ActorId;
  destroyActor(actor: ActorId): void;
  /**
   * Whom a server replicates `actor` to, besides its own player's client: 'always' (the default), 'owner-only',
   * or the players in one of these groups (at most 64, each 1 to 64 bytes); needs `relevancy`.
   */
  setRelevancy(actor: ActorId, relevancy: 'always' | 'owner-only' | string[]): void;
  /** Puts the player `player` belongs to (its pawn, controller or player state) in these groups; needs `relevancy`. */
  setPlayerGroups(player: ActorId, groups: string[]): void;
};

/** The assets of the bundles the world loaded. */
export const assets: {
  read(name: string): Uint8Array;
  readText(name: string): string;
};

/** The component manager: requests, extension handlers, extension events and property watches. */
export const components: {
  readonly RECEIVER_ADDED: 'ReceiverAdded';
  readonly RECEIVER_REMOVED: 'ReceiverRemoved';
  readonly EXTENSION_ADDED: 'ExtensionAdded';
  readonly EXTENSION_REMOVED: 'ExtensionRemoved';
  readonly GAME_ACTOR_READY: 'GameActorReady';
  /** Delivers events about receivers of `receiver` (or a subclass) to `onExtensionEvent`, numbered `handler`. */
  addExtensionHandler(receiver: string, handler: number): ExtensionHandler;
  /** Asks for `component` on every actor of class `receiver` (or a subclass) while the handle lives. */
  requestComponent(receiver: string, component: string, options?: { unique?: boolean }): ComponentRequest;
  /** First use of a lazily created component: true when it was created now. */
  ensureComponent(actor: ActorId, component: string): boolean;
  /** Calls `onPropertyChanged`, numbered `watch`, whenever the property changes. */
  watchProperty(actor: ActorId, component: string, name: string, watch: number): PropertyWatch;
  /** Sends a custom event to the handlers of the actor's class chain; needs `send-events`. */
  sendEvent(actor: ActorId, event: string): void;
  /** `sendEvent`, sent with one host call for all deferred when the callback returns; a refusal is logged. */
  deferSendEvent(actor: ActorId, event: string): void;
  addReceiver(actor: ActorId): void;
  removeReceiver(actor: ActorId): void;
};

/** The init-state system: features of an actor moving through one ordered list of states. */
export const initStates: {
  readonly SPAWNED: 'InitState.Spawned';
  readonly DATA_AVAILABLE: 'InitState.DataAvailable';
  readonly DATA_INITIALIZED: 'InitState.DataInitialized';
  readonly GAMEPLAY_READY: 'InitState.GameplayReady';
  /** The world's init states, first to last. */
  states(): string[];
  /** A state's name from the number batches carry (0: none). */
  stateName(ordinal: number): string | undefined;
  registerFeature(actor: ActorId, feature: string, implementer: string): void;
  unregisterFeature(actor: ActorId, feature: string): void;
  featureState(actor: ActorId, feature: string): string | undefined;
  /** Whether `feature` has reached `state` (false when the feature is unknown). */
  reached(actor: ActorId, feature: string, state: string): boolean;
  allReached(actor: ActorId, state: string, excluding?: string): boolean;
  changeState(actor: ActorId, feature: string, state: string): void;
  /** Queues a walk of `feature`'s chain, as far as its `canChangeInitState` allows. */
  continueChain(actor: ActorId, feature: string): void;
  /** Unreal's default for a coordinating feature: move every other feature forward, then this one. */
  checkDefaultInitialization(actor: ActorId, feature: string): void;
  /** `registerFeature`, sent with one host call for all deferred when the callback returns (before the walks). */
  deferRegisterFeature(actor: ActorId, feature: string, implementer: string): void;
  /** `continueChain`, sent with one host call for all deferred when the callback returns. */
  deferContinueChain(actor: ActorId, feature: string): void;
  /** `checkDefaultInitialization`, deferred as `deferContinueChain` is. */
  deferCheckDefaultInitialization(actor: ActorId, feature: string): void;
  /** Calls `onInitStateChanged`, numbered `subscription`, when the actor's features (or `feature`) change. */
  subscribeActor(
    actor: ActorId,
    subscription: number,
    options?: { feature?: string; state?: string; callIfReached?: boolean },
  ): Subscription;
  /** Like `subscribeActor`, for `feature` (every feature when `undefined`) of every actor of a class. */
  subscribeClass(
    className: string,
    feature: string | undefined,
    subscription: number,
    options?: { state?: string; callIfReached?: boolean },
  ): Subscription;
};

/** Work as game time passes: timers fire in the world's frames and reach `onTimer`. Times in seconds. */
export const timers: {
  every(seconds: number, timer: number): Timer;
  everyFrame(timer: number): Timer;
  after(seconds: number, timer: number): Timer;
  /** The current frame. */
  now(): Frame;
};

/**
 * A game feature. Extend it and export the class as `plugin.js`'s default. Lifecycle, in order: `onRegistering`,
 * `onLoading`, `onActivating`, `onActivated`; at end of play `onDeactivating` (and `pollDeactivation` while it
 * returns 'pending'), `onUnloading`, `onUnregistering`. A hook that throws in `onRegistering`, `onLoading`,
 * `onActivating` or `restore` fails the plugin in that world.
 */
export class Plugin {
  onRegistering(): void;
  onLoading(): void;
  onActivating(context: ActivationContext): void;
  onActivated(): void;
  /** End of play: undo what activation did. Return 'pending' to hold deactivation open. */
  onDeactivating(context: ActivationContext): Deactivation | void;
  pollDeactivation(): Deactivation | void;
  onUnloading(): void;
  onUnregistering(): void;
  /** Hot reload: bytes for the next version, or undefined to start it fresh. */
  snapshot(): Uint8Array | undefined;
  /** Hot reload: what the previous version's snapshot returned. Throw to refuse the new version. */
  restore(state: Uint8Array): void;
  onExtensionEvent(handler: number, actor: ActorId, event: string): void;
  canChangeInitState(actor: ActorId, feature: string, current: string | undefined, desired: string): boolean;
  handleChangeInitState(actor: ActorId, feature: string, current: string | undefined, desired: string): void;
  /** Try to move `feature` forward; by default, walk its chain (deferred). */
  checkDefaultInitialization(actor: ActorId, feature: string): void;
  onInitStateChanged(subscription: number, actor: ActorId, feature: string, state: string | undefined): void;
  onTimer(timer: number, times: number, frame: Frame): void;
  onPropertyChanged(
    watch: number,
    actor: ActorId,
    oldValue: PropertyValue | undefined,
    newValue: PropertyValue | undefined,
  ): void;
  onReplicated(
    actor: ActorId,
    component: string,
    property: string,
    oldValue: PropertyValue | undefined,
    newValue: PropertyValue,
  ): void;
}

/** The world's exports for a plugin class: used by the build's entry module, not by plugins. */
export function exportPlugin(PluginClass: new () => Plugin): unknown;

declare global {
  /**
   * What the plugin's runtime (componentize-js) provides beyond the language: `console` and its kin reach the
   * plugin's log, a line at a time; `TextEncoder` and `TextDecoder` convert UTF-8. There is no DOM, timer or
   * network: never wait in a hook.
   */
  const console: {
    log(...data: unknown[]): void;
    info(...data: unknown[]): void;
    warn(...data: unknown[]): void;
    error(...data: unknown[]): void;
    debug(...data: unknown[]): void;
  };
  class TextEncoder {
    encode(input?: string): Uint8Array;
  }
  class TextDecoder {
    constructor(label?: string);
    decode(input?: Uint8Array): string;
  }
}
