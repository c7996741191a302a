// Episodes: a conversation recorded message by message, then ended (which extracts facts).
// Message and end have a second REST form with the episode id in the body, as existing SDKs send it.
import type { TObject } from 'typebox';
import {
  EndEpisodeBody, EndEpisodeByBody, EndEpisodeResponse, EpisodeMessageBody, EpisodeMessageByBody, ImportEpisodeBody,
  ImportEpisodeResponse, ListEpisodesQuery, ListEpisodesResponse, MAX_IMPORT_MESSAGES, StartEpisodeBody, StartEpisodeResponse, StatusResponse,
} from '../schemas.js';
import { declareOperation, WRITES, type RestBinding } from './declare.js';

/** `/v1/episodes/:id/<action>` (the spec's), then `/v1/episodes/<action>` with the id in the body. */
function byEpisodeId(action: string, body: TObject, summary: string): [RestBinding, RestBinding] {
  return [
    { method: 'post', path: `/v1/episodes/:id/${action}`, body, params: { id: 'episode_id' }, summary },
    { method: 'post', path: `/v1/episodes/${action}`, summary: `${summary} (episode id in the body)` },
  ];
}

export const startEpisode = declareOperation({
  name: 'startEpisode',
  input: StartEpisodeBody,
  output: StartEpisodeResponse,
  position: 'returned',
  errors: ['STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{ method: 'post', path: '/v1/episodes/start', summary: 'Start an episode between participants' }],
  mcp: {
    name: 'episode_start',
    title: 'Start an episode',
    description:
      'Begin recording a conversation or task (an episode) between named participants, e.g. ["alice", "support-bot"]. ' +
      'Participants are created as entities if needed. Returns {episode_id}; pass it to episode_message for each ' +
      'message and to episode_end when the conversation is over. An episode expires after a period without messages (30 minutes by default).',
    annotations: WRITES,
  },
});

export const addMessage = declareOperation({
  name: 'addMessage',
  input: EpisodeMessageByBody,
  output: StatusResponse,
  position: 'returned',
  errors: ['NOT_FOUND', 'STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: byEpisodeId('message', EpisodeMessageBody, 'Add a message to an active episode'),
  mcp: {
    name: 'episode_message',
    title: 'Add a message to an episode',
    description:
      'Append one message to an active episode: episode_id (from episode_start), role (who spoke, e.g. "user" or ' +
      '"assistant") and content (the message text). Each message is stored at once as an episodic memory and can be ' +
      'recalled immediately. Returns {status: "ok"}. Fails with "not found" when the episode is unknown, already ' +
      'ended or expired: start a new episode then.',
    annotations: WRITES,
  },
});

export const endEpisode = declareOperation({
  name: 'endEpisode',
  input: EndEpisodeByBody,
  output: EndEpisodeResponse,
  position: 'returned',
  errors: ['NOT_FOUND', 'STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: byEpisodeId('end', EndEpisodeBody, 'End an episode and extract memories from it'),
  mcp: {
    name: 'episode_end',
    title: 'End an episode',
    description:
      'Close an episode and extract lasting memories (facts and procedures) from its messages. Optional outcome: ' +
      '"success", "failure" or "partial". Returns {memories_created, extraction_tier}: how many semantic/procedural ' +
      'memories the extraction stored, and which extractor ran (1 offline rules, 2 the LLM endpoint). Fails with "not found" when the episode is unknown or was already ended.',
    annotations: WRITES,
  },
});

export const importEpisode = declareOperation({
  name: 'importEpisode',
  input: ImportEpisodeBody,
  output: ImportEpisodeResponse,
  position: 'returned',
  errors: ['STORAGE_FULL', 'DATABASE_UNAVAILABLE'],
  rest: [{ method: 'post', path: '/v1/episodes/import', status: 201, summary: 'Store a whole past conversation in one call (one transaction), ended and extracted' }],
  mcp: {
    name: 'episode_import',
    title: 'Import a past conversation',
    description:
      'Store a whole conversation that already happened, in one call: participants, optional started_at (when it took place, ' +
      'ISO 8601 with offset), optional outcome, and messages [{role, content, occurred_at?}] in order (up to ' +
      `${MAX_IMPORT_MESSAGES}); a message without occurred_at is dated as the one before it (the first: started_at). The episode is stored ended, and facts are extracted from it as episode_end does, dated to when ` +
      'it took place. Returns {episode_id, memories_created, extraction_tier}. Use it to load chat history; for a live ' +
      'conversation use episode_start / episode_message / episode_end.',
    annotations: WRITES,
  },
});

/**
 * The console's episodes view (issue 26): who took part, when, how it ended. The query string is
 * the input. No MCP tool: agents reach conversations through recall_grouped.
 */
export const listEpisodes = declareOperation({
  name: 'listEpisodes',
  input: ListEpisodesQuery,
  output: ListEpisodesResponse,
  errors: [],
  rest: [{
    method: 'get', path: '/v1/episodes', body: null, query: ListEpisodesQuery,
    summary: 'Episodes, newest started first, a page at a time (entity: only those it took part in)',
  }],
});
