// The WAL position one write operation's answer carries (PostgreSQL: the Memory-Position header,
// MCP `_meta`): the position of the batch that committed its last writer command — not this
// node's latest, which may belong to later writes and would make a reader wait for them too.
// An operation sends its commands one after another and batches commit in order, so the last
// command's batch is at or past every earlier one's.
export class CommitTrail {
  /** Undefined until a command committed, and when the last one's position could not be read. */
  position: string | undefined;

  /** A command's acknowledgement with its batch's position (undefined: none known). */
  note(position: string | undefined): void {
    this.position = position;
  }
}
