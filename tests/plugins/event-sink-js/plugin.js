// event-sink in JavaScript: counts extension events and sums their actor ids (the least work a handler can do,
// so benchmarks measure delivery; an event named `Log:...` is logged by name), and carries both across a hot reload in event-sink's own state format.

import { Plugin, components, log } from 'gamefeature';

export default class EventSink extends Plugin {
  events = 0n;
  checksum = 0n;

  onActivating(context) {
    this.handler = components.addExtensionHandler('Pawn', 1);
    console.log('sink active'); // standard output reaches the plugin's log, a line at a time
  }

  onExtensionEvent(handler, actor, event) {
    this.events += 1n;
    this.checksum = BigInt.asUintN(64, this.checksum + actor);
    if (event.startsWith('Log:')) log.info(event);
  }

  snapshot() {
    const state = new Uint8Array(17);
    const view = new DataView(state.buffer);
    state[0] = 1;
    view.setBigUint64(1, this.events, true);
    view.setBigUint64(9, this.checksum, true);
    return state;
  }

  restore(state) {
    if (state[0] !== 1) throw new Error(`unknown state format ${state[0]}`);
    if (state.length < 17) throw new Error(`state of ${state.length} bytes is truncated`);
    const view = new DataView(state.buffer, state.byteOffset, state.byteLength);
    this.events = view.getBigUint64(1, true);
    this.checksum = view.getBigUint64(9, true);
    log.info(`restored a count of ${this.events} events`);
  }

  onDeactivating(context) {
    log.info(`received ${this.events} events`);
    return 'done';
  }
}
