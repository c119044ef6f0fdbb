// A shrinking zone, written in JavaScript, for the arena: the server spawns one Zone actor whose ZoneComponent
// (this plugin's) holds a centre and a radius; every second the radius closes in, down to a last circle, and every
// hero outside it loses health. The arena's size comes from the experience's `arena` asset (`width = 40`,
// `height = 30`). The game draws the zone and knows nothing else of it.

import { Plugin, assets, log, timers, world } from 'gamefeature';

const ZONE = 'ZoneComponent';
const EVERY_SECOND = 1; // timer
const SHRINK = 0.75; // arena units a second
const LAST_RADIUS = 5;
const DAMAGE = 8n;

/** `key = value` lines of a text asset, numbers only; `{}` when the asset is not there. */
function settings(name) {
  let text;
  try {
    text = assets.readText(name);
  } catch {
    return {};
  }
  const found = {};
  for (const line of text.split('\n')) {
    const [key, value] = line.split('=').map((part) => part.trim());
    if (key && value && !key.startsWith('#')) found[key] = Number(value);
  }
  return found;
}

export default class ShrinkingZone extends Plugin {
  hurt = 0;

  onActivating(context) {
    if (context.netMode === 'client') return;
    const { width = 40, height = 30 } = settings('arena');
    this.centre = { x: width / 2, y: height / 2 };
    this.radius = Math.hypot(width, height) / 2;
    this.zone = world.spawnActor('Zone');
    world.setProperty(this.zone, ZONE, 'x', this.centre.x);
    world.setProperty(this.zone, ZONE, 'y', this.centre.y);
    world.setProperty(this.zone, ZONE, 'radius', this.radius);
    this.timer = timers.every(1, EVERY_SECOND);
  }

  onTimer(timer, times) {
    this.radius = Math.max(LAST_RADIUS, this.radius - SHRINK * times);
    world.setProperty(this.zone, ZONE, 'radius', this.radius);
    for (const hero of world.actorsOfClass('HeroCharacter')) {
      const x = world.getProperty(hero, 'Position', 'x');
      const y = world.getProperty(hero, 'Position', 'y');
      const health = world.getProperty(hero, 'HealthComponent', 'health');
      // Heroes the game has not placed yet, and heroes already down, are left alone.
      if (typeof x !== 'number' || typeof y !== 'number' || typeof health !== 'bigint' || health <= 0n) continue;
      if (Math.hypot(x - this.centre.x, y - this.centre.y) <= this.radius) continue;
      // Integers cross into the host from 0 up (componentize-js), so health stops at 0.
      const left = health > DAMAGE ? health - DAMAGE : 0n;
      world.setProperty(hero, 'HealthComponent', 'health', left);
      this.hurt += 1;
    }
  }

  /** @returns {import('gamefeature').Deactivation} */
  onDeactivating() {
    this.timer?.release();
    log.info(`the zone closed to ${this.radius.toFixed(1)}; it hurt heroes ${this.hurt} time(s)`);
    return 'done';
  }
}
