// A semantic fact placed on its owner's attribute timeline (supersession.ts), inserted with the
// placement's validity, then the placement applied — the order restore uses (remember hands the
// superseded facts to the insert instead: the same rows). No duplicate check.
import { factAttribute } from '../../src/shared/fact-attributes.js';
import { runNow } from '../../src/writer/commands/run.js';
import { applyPlacement, placement, type Placement } from '../../src/writer/commands/supersession.js';
import type { WriteRows } from '../../src/writer/commands/rows.js';

/** `contentKey` defaults to one per id, so repeated values are stored side by side, not de-duplicated. */
export function placeFact(rows: WriteRows, ownerId: string, id: string, content: string, at: number,
  contentKey = `${content.toLowerCase()} ${id}`): Placement {
  const place = runNow(placement(rows, ownerId, content, at));
  runNow(rows.insertMemory({
    id, type: 'semantic', content, contentKey, confidence: 0.9, stability: 1, difficulty: 5,
    at, tier: 0, ownerId, episodeId: null, seq: null, role: null, context: '',
    links: [{ entityId: ownerId, relation: 'owner' }], occurredAt: at,
    validUntil: place.next?.at ?? null, supersededBy: place.next?.id ?? null, factAttribute: factAttribute(content)!.attribute,
  }));
  runNow(applyPlacement(rows, { id, occurred_at: at }, place));
  return place;
}
