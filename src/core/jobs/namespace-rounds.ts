// Fairness between tenants for the background jobs: the namespaces with work waiting take turns,
// one batch each, in the order their work arrived. A namespace with a 50,000-memory backlog gets
// one batch, then every other waiting namespace gets one, so a small tenant's new memories wait
// for at most one batch per busy tenant, never for a whole backlog.
export class NamespaceRounds {
  /** Namespaces with work waiting, in turn order (a Set keeps insertion order). */
  private readonly waiting = new Set<string>();

  get size(): number {
    return this.waiting.size;
  }

  /** `namespace` has (more) work: it joins the rounds, keeping its place if it is already in. */
  add(namespace: string): void {
    this.waiting.add(namespace);
  }

  /** The namespace whose turn it is, moved to the back of the rounds; undefined when none waits. */
  next(): string | undefined {
    const first = this.waiting.values().next();
    if (first.done) return undefined;
    this.waiting.delete(first.value);
    this.waiting.add(first.value);
    return first.value;
  }

  /**
   * The next `max` namespaces whose turn it is (fewer when fewer wait; each once), each moved to
   * the back: a turn for several namespaces at once, in the same order one by one would give.
   */
  nextFew(max: number): string[] {
    const taken: string[] = [];
    for (const namespace of this.waiting) {
      if (taken.length >= max) break;
      taken.push(namespace);
    }
    for (const namespace of taken) {
      this.waiting.delete(namespace);
      this.waiting.add(namespace);
    }
    return taken;
  }

  /** `namespace` has no work left (until it is added again). */
  done(namespace: string): void {
    this.waiting.delete(namespace);
  }
}
