// A consolidation run's read side, in the pool: promotion clusters and decay steps computed
// from this worker's read port (either backend). The writer applies the plan as one command.
import type { Config } from '../../shared/config.js';
import type { ConsolidationPlan } from '../../shared/protocol/writer.js';
import type { Embedder } from '../embedding/index.js';
import type { ReadPort } from '../port/read-port.js';
import { DecayPlanner } from './decay.js';
import { PromotionPlanner } from './promotion.js';

export class ConsolidationPlanner {
  private readonly promotion: PromotionPlanner;
  private readonly decay: DecayPlanner;

  constructor(port: ReadPort, config: Pick<Config, 'promotionSimilarity' | 'archiveRetrievability'>) {
    this.promotion = new PromotionPlanner(port, config.promotionSimilarity);
    this.decay = new DecayPlanner(port, config.archiveRetrievability);
  }

  async plan(now: number, embedder: Promise<Embedder>): Promise<ConsolidationPlan> {
    const { promote, watermark } = await this.promotion.plan(embedder);
    return { at: now, watermark, promote, decay: await this.decay.plan(now) };
  }
}
