// Who says each turn and to whom, from the episode's participants and the turns' roles: the
// people "I" and "you" stand for. A role that names a participant is that participant (two
// people talking: role "Caroline"); a generic human role ("user") is the first user-kind
// participant; an agent role is the agent side, whose narration is never a fact about anyone.
// Any other role is someone the episode does not name: "I" in their turn is nobody we know.
// The addressee is the one other participant, else whoever spoke last before this turn;
// when neither is known, "you" stays unresolved and the rules drop what uses it.
import type { EntityRecord } from '../../shared/schemas.js';

export const AGENT_ROLES = new Set(['assistant', 'agent', 'system', 'tool', 'bot', 'ai', 'model']);
/** Roles that stand for the human side without naming anyone: they speak as the first human participant. */
const HUMAN_ROLES = new Set(['user', 'human']);

export interface TurnVoices {
  /** The person "I" stands for; null for the agent side and for roles nobody answers to. */
  speaker: string | null;
  /** The person "you" stands for, when known. */
  addressee: string | null;
  fromAgent: boolean;
}

/** Who extracted facts are about when a turn's role names nobody: the first human participant. */
export function subjectOf(participants: EntityRecord[]): EntityRecord | undefined {
  return participants.find((p) => p.kind === 'user') ?? participants[0];
}

export function voicesOf(turns: { role: string }[], participants: EntityRecord[]): TurnVoices[] {
  const byName = new Map(participants.map((p) => [p.name.toLowerCase(), p] as const));
  const agent = participants.find((p) => p.kind === 'agent');
  const subject = subjectOf(participants);
  const identity = (role: string): { name: string | null; fromAgent: boolean } => {
    const named = byName.get(role.trim().toLowerCase());
    if (named) return { name: named.name, fromAgent: named.kind === 'agent' };
    if (AGENT_ROLES.has(role.trim().toLowerCase())) return { name: agent?.name ?? null, fromAgent: true };
    if (!HUMAN_ROLES.has(role.trim().toLowerCase())) return { name: null, fromAgent: false };
    return { name: subject && subject.kind !== 'agent' ? subject.name : null, fromAgent: false };
  };
  // The last other speaker before each turn, kept as the transcript is walked (one pass, not a
  // look back from every turn: a long monologue would make that quadratic): the latest named
  // speaker, and the latest one other than them.
  let latest: string | null = null;
  let beforeLatest: string | null = null;
  return turns.map((turn) => {
    const me = identity(turn.role);
    const others = participants.filter((p) => p.name !== me.name);
    const lastOther = latest !== null && latest !== me.name ? latest : beforeLatest;
    const addressee = others.length === 1 ? others[0].name : lastOther;
    if (me.name !== null && me.name !== latest) {
      beforeLatest = latest;
      latest = me.name;
    }
    return { speaker: me.fromAgent ? null : me.name, addressee, fromAgent: me.fromAgent };
  });
}
