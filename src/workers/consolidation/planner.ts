// A consolidation run's read side, in the pool: promotion clusters and decay steps computed
// from this worker's read-only connection. The writer applies the plan as one command.
import type { Config } from '../../shared/config.js';
import type { Db } from '../../shared/db.js';
import type { ConsolidationPlan } from '../../shared/messages.js';
import type { Embedder } from '../embedding/index.js';
import { DecayPlanner } from './decay.js';
import { PromotionPlanner } from './promotion.js';

export class ConsolidationPlanner {
  private readonly promotion: PromotionPlanner;
  private readonly decay: DecayPlanner;

  constructor(db: Db, namespaceId: number, config: Pick<Config, 'promotionSimilarity' | 'archiveRetrievability'>) {
    this.promotion = new PromotionPlanner(db, namespaceId, config.promotionSimilarity);
    this.decay = new DecayPlanner(db, namespaceId, config.archiveRetrievability);
  }

  async plan(now: number, embedder: Promise<Embedder>): Promise<ConsolidationPlan> {
    const { promote, watermark } = await this.promotion.plan(embedder);
    return { at: now, watermark, promote, decay: this.decay.plan(now) };
  }
}
