// Deletes and restores take turns, in arrival order, with bounded queues, within a namespace:
// a namespace's rows are never touched by another's deletes or restores, so tenants never wait
// for (nor are refused because of, nor learn of) each other's. Both work in many
// writer commands, and interleaved they undo each other: a DELETE answered 200 while most of
// the entity came back. A restore can bring back memories of more than its own entity — a
// snapshot of X holds the memories Y took part in — so a restore takes turns with deletes of
// ANY entity (not only its own), and with other restores (one snapshot read at a time bounds the
// memory a restore holds). Deletes of different entities run side by side; deletes of one
// entity take turns with each other.
// The order is the order of arrival: a turn starts once no earlier turn it conflicts with is
// running or waiting, so a DELETE sent after a restore (even one still waiting for its own
// turn) runs after it. A caller past a queue's bound is refused at once (409) rather than left
// waiting behind an unbounded line.
// Over PostgreSQL a turn that starts here then takes its turn cluster-wide (cluster-turns.ts):
// another node's conflicting delete or restore is waited for there.
import { fail } from '../shared/errors.js';
import { LOCAL_CLUSTER_TURNS, type ClusterTurns } from './cluster-turns.js';

/** Turns of one kind (a namespace's restores; deletes of one entity) that may wait before the next is refused (409). */
export const MAX_WAITING_TURNS = 4;
/** A namespace's deletes of all entities that may wait (behind a restore) before the next is refused (409 ENTITY_BUSY). */
export const MAX_WAITING_DELETES = 64;
/**
 * Turns of every namespace that may wait at once: the line's memory stays bounded however many
 * tenants there are. Far above what one namespace may queue, so only a service-wide flood meets it.
 */
export const MAX_WAITING_OVERALL = 4_096;

interface Turn {
  namespace: string;
  /** The deleted entity; null for a restore. */
  entity: string | null;
  started: boolean;
  start: () => void;
}

export class DeleteRestoreTurns {
  /** Running and waiting turns, in arrival order. */
  private readonly line: Turn[] = [];

  constructor(private readonly cluster: ClusterTurns = LOCAL_CLUSTER_TURNS) {}

  /** Runs `work` once every delete and restore of the namespace that arrived before it has ended. */
  restore<T>(namespace: string, work: () => Promise<T>): Promise<T> {
    return this.take(namespace, null, work);
  }

  /** Runs `work` once every restore, and every delete of `entity`, of the namespace that arrived before it has ended. */
  delete<T>(namespace: string, entity: string, work: () => Promise<T>): Promise<T> {
    return this.take(namespace, entity, work);
  }

  private async take<T>(namespace: string, entity: string | null, work: () => Promise<T>): Promise<T> {
    this.refuseIfFull(namespace, entity);
    const turn: Turn = { namespace, entity, started: false, start: () => {} };
    const started = new Promise<void>((start) => (turn.start = start));
    this.line.push(turn);
    this.startReady();
    await started;
    try {
      const clusterTurn = await this.cluster.take(namespace, entity);
      try {
        return await work();
      } finally {
        await clusterTurn.release();
      }
    } finally {
      this.line.splice(this.line.indexOf(turn), 1);
      this.startReady();
    }
  }

  private refuseIfFull(namespace: string, entity: string | null): void {
    const everywhere = this.line.filter((turn) => !turn.started);
    if (everywhere.length >= MAX_WAITING_OVERALL) {
      throw entity === null ? fail.restoreBusy(MAX_WAITING_TURNS) : fail.entityBusy(entity, MAX_WAITING_TURNS, MAX_WAITING_DELETES);
    }
    const waiting = everywhere.filter((turn) => turn.namespace === namespace);
    if (entity === null) {
      if (waiting.filter((turn) => turn.entity === null).length >= MAX_WAITING_TURNS) throw fail.restoreBusy(MAX_WAITING_TURNS);
      return;
    }
    const deletes = waiting.filter((turn) => turn.entity !== null);
    if (deletes.length >= MAX_WAITING_DELETES || deletes.filter((turn) => turn.entity === entity).length >= MAX_WAITING_TURNS) {
      throw fail.entityBusy(entity, MAX_WAITING_TURNS, MAX_WAITING_DELETES);
    }
  }

  /** Starts each waiting turn that no earlier turn conflicts with (the line is short: bounded above). */
  private startReady(): void {
    this.line.forEach((turn, index) => {
      if (turn.started) return;
      if (this.line.slice(0, index).some((earlier) => conflict(earlier, turn))) return;
      turn.started = true;
      turn.start();
    });
  }
}

/** Within a namespace, a restore conflicts with everything; deletes only with deletes of the same entity. */
function conflict(a: Turn, b: Turn): boolean {
  return a.namespace === b.namespace && (a.entity === null || b.entity === null || a.entity === b.entity);
}
