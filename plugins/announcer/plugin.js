// The announcer, written in JavaScript. It takes part in each hero's initialisation the way a Lyra game
// feature's component does: it registers a feature of its own, "Announcer", beside lyra-character's
// PawnExtension and Hero, so the pawn's DataInitialized waits for it too. Its chain: DataAvailable once the
// hero has its player state (Hero at DataAvailable), DataInitialized once the pawn extension is initialised,
// then GameplayReady — where the hero is announced. It tries again whenever another feature of the hero moves;
// its walks are deferred (`deferContinueChain`), so a batch of heroes costs one host call for all of them.

import { Plugin, components, initStates, log } from 'gamefeature';

const ANNOUNCER = 'Announcer';
const HEROES = 1; // extension handler
const HERO_FEATURES = 2; // init-state subscriptions

const { SPAWNED, DATA_AVAILABLE, DATA_INITIALIZED, GAMEPLAY_READY } = initStates;

export default class Announcer extends Plugin {
  heroes = new Map(); // hero -> its subscription
  announced = 0;

  onActivating(context) {
    this.handler = components.addExtensionHandler('HeroCharacter', HEROES);
    log.info(`announcer ready in ${context.worldName}`);
  }

  onExtensionEvent(handler, hero, event) {
    switch (event) {
      case components.EXTENSION_ADDED:
      case components.GAME_ACTOR_READY:
        this.join(hero);
        break;
      case components.EXTENSION_REMOVED:
      case components.RECEIVER_REMOVED:
        this.leave(hero);
        if (event === components.RECEIVER_REMOVED) log.info(`hero ${hero} has left the arena`);
        break;
    }
  }

  join(hero) {
    if (this.heroes.has(hero)) return;
    initStates.registerFeature(hero, ANNOUNCER, 'AnnouncerComponent');
    const subscription = initStates.subscribeActor(hero, HERO_FEATURES, { callIfReached: false });
    this.heroes.set(hero, subscription);
    initStates.deferContinueChain(hero, ANNOUNCER);
  }

  leave(hero) {
    const subscription = this.heroes.get(hero);
    if (subscription === undefined) return;
    subscription.release();
    this.heroes.delete(hero);
    try {
      initStates.unregisterFeature(hero, ANNOUNCER);
    } catch {
      // The hero is going: its features go with it.
    }
  }

  onInitStateChanged(subscription, hero, feature, state) {
    if (feature !== ANNOUNCER) initStates.deferContinueChain(hero, ANNOUNCER);
  }

  canChangeInitState(hero, feature, current, desired) {
    switch (desired) {
      case SPAWNED:
        return current === undefined;
      case DATA_AVAILABLE:
        return initStates.reached(hero, 'Hero', DATA_AVAILABLE);
      case DATA_INITIALIZED:
        return initStates.reached(hero, 'PawnExtension', DATA_INITIALIZED);
      case GAMEPLAY_READY:
        return true;
      default:
        return false;
    }
  }

  handleChangeInitState(hero, feature, current, desired) {
    if (desired === GAMEPLAY_READY) {
      this.announced += 1;
      log.info(`hero ${hero} enters the arena (${this.announced} so far)`);
    }
  }

  /** @returns {import('gamefeature').Deactivation} */
  onDeactivating(context) {
    for (const hero of [...this.heroes.keys()]) this.leave(hero);
    this.handler.release();
    log.info(`announcer signing off: ${this.announced} hero(es) announced`);
    return 'done';
  }
}
