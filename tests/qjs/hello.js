// A plugin for componentize-qjs (QuickJS), written against the raw bindings: the host test builds it twice,
// with and without `--sync`, to show that the synchronous build runs and the default (async ABI) build is
// refused with the flag to use.
import { log } from 'gamefeature:plugin/log@0.2.0';
import { addExtensionHandler } from 'gamefeature:plugin/components@0.2.0';

let characters;

export const lifecycle = {
  onRegistering() {},
  onLoading() {},
  onActivating(context) {
    log('info', `quickjs plugin active in ${context.worldName}`);
    characters = addExtensionHandler('Character', 7);
  },
  onActivated() {},
  onDeactivating(context) {
    characters[Symbol.dispose]();
    return 'done';
  },
  pollDeactivation() {
    return 'done';
  },
  onUnloading() {},
  onUnregistering() {},
  snapshot() {
    return undefined;
  },
  restore(state) {},
};

export const handlers = {
  handleExtensionEvents(handlers, actors, events, names) {
    for (let i = 0; i < handlers.length; i++) {
      log('info', `handler ${handlers[i]} (${characters.id()}): ${names[events[i]]} for actor ${actors[i]}`);
    }
  },
};

export const initStateCallbacks = {
  tryChangeInitStates(actors) {
    return Array.from(actors, () => ({ steps: 1, refused: false }));
  },
  checkDefaultInitializations() {},
  onInitStatesChanged() {},
};

export const timerCallbacks = { onTimers() {} };
export const replicationCallbacks = { onReplicated() {} };
export const propertyCallbacks = { onPropertiesChanged() {} };
