// Vectors from different embedders are not comparable: a database embedded by another one than
// configured stops start-up (or is re-embedded, SERVICE_REEMBED=true), on either backend.
import type { EmbedderIdentity as Identity } from '../../shared/embedder-identity.js';

type EmbedderIdentity = Pick<Identity, 'id' | 'dimensions'>;

export class EmbedderMismatchError extends Error {
  constructor(stored: EmbedderIdentity, configured: EmbedderIdentity) {
    super(
      `the database holds vectors from embedder ${stored.id} (${stored.dimensions}-d) but ${configured.id} ` +
        `(${configured.dimensions}-d) is configured: set SERVICE_EMBEDDER back, or start once with ` +
        'SERVICE_REEMBED=true to re-embed every memory with the new embedder',
    );
    this.name = 'EmbedderMismatchError';
  }
}
