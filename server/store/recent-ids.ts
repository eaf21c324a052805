/** Slots of a new or emptied table. */
const MIN_CAPACITY = 64;
/** The table grows past this share of slots in use, keeping probe runs short. */
const MAX_LOAD = 0.6;
const OID_BYTES = 20;

/**
 * Object ids with the time each was last written or probed, as raw 20-byte
 * ids in one open-addressing table (typed arrays). Retention keeps every id
 * touched within its grace period (15 minutes by default), which at a turn
 * every second or so is tens of thousands of ids: as hex strings in a `Map`
 * with a time each, that was ~110 bytes an id on the heap; here it is 28
 * bytes a slot.
 */
export class RecentIds {
  private capacity = MIN_CAPACITY;
  private oids = new Uint8Array(MIN_CAPACITY * OID_BYTES);
  /** When each slot's id was last touched (epoch ms); 0 marks an empty slot. */
  private times = new Float64Array(MIN_CAPACITY);
  private count = 0;

  /** Number of ids held. */
  get size(): number {
    return this.count;
  }

  /** Records that `oid` (40 hex digits) was written or probed at `at`. */
  touch(oid: string, at = Date.now()): void {
    const raw = Buffer.from(oid, 'hex');
    const slot = this.slotOf(raw);
    if (this.times[slot] === 0) {
      this.oids.set(raw, slot * OID_BYTES);
      this.count++;
    }
    // Never 0, which marks an empty slot.
    this.times[slot] = Math.max(at, 1);
    if (this.count > this.capacity * MAX_LOAD) this.rebuild(this.capacity * 2, 0);
  }

  /** Ids (hex) touched at or after `time` (epoch ms). */
  since(time: number): Set<string> {
    const ids = new Set<string>();
    for (let slot = 0; slot < this.capacity; slot++) {
      const at = this.times[slot]!;
      if (at !== 0 && at >= time) ids.add(this.hexAt(slot));
    }
    return ids;
  }

  /** Forgets ids last touched before `time` (epoch ms), giving back the room they took. */
  forgetBefore(time: number): void {
    let kept = 0;
    for (let slot = 0; slot < this.capacity; slot++) {
      const at = this.times[slot]!;
      if (at !== 0 && at >= time) kept++;
    }
    let capacity = MIN_CAPACITY;
    while (kept > capacity * MAX_LOAD) capacity *= 2;
    this.rebuild(capacity, time);
  }

  /** The slot holding `raw`, or the empty slot where it belongs. */
  private slotOf(raw: Uint8Array): number {
    const mask = this.capacity - 1;
    // Object ids are SHA-1 digests: their first bytes are already evenly spread.
    let slot = (raw[0]! | (raw[1]! << 8) | (raw[2]! << 16) | (raw[3]! << 24)) & mask;
    for (;;) {
      if (this.times[slot] === 0 || this.sameId(slot, raw)) return slot;
      slot = (slot + 1) & mask;
    }
  }

  private sameId(slot: number, raw: Uint8Array): boolean {
    const base = slot * OID_BYTES;
    for (let i = 0; i < OID_BYTES; i++) if (this.oids[base + i] !== raw[i]) return false;
    return true;
  }

  private hexAt(slot: number): string {
    return Buffer.from(this.oids.buffer, this.oids.byteOffset + slot * OID_BYTES, OID_BYTES).toString('hex');
  }

  /** Moves the ids touched at or after `keepFrom` into a table of `capacity` slots. */
  private rebuild(capacity: number, keepFrom: number): void {
    const { oids, times } = this;
    const old = this.capacity;
    this.capacity = capacity;
    this.oids = new Uint8Array(capacity * OID_BYTES);
    this.times = new Float64Array(capacity);
    this.count = 0;
    for (let slot = 0; slot < old; slot++) {
      const at = times[slot]!;
      if (at === 0 || at < keepFrom) continue;
      const raw = oids.subarray(slot * OID_BYTES, (slot + 1) * OID_BYTES);
      const to = this.slotOf(raw);
      this.oids.set(raw, to * OID_BYTES);
      this.times[to] = at;
      this.count++;
    }
  }
}
