/**
 * The admin endpoints `POST /v1/deletions` and `POST /v1/audiences` (only with an admin token,
 * sent as `Authorization: Bearer <token>`): the collector's `requestDeletion` and `syncAudience`
 * over HTTP.
 */
import { requireBearer } from '../http/auth.js'
import { fromMessageError, jsonResponse } from '../http/errors.js'
import { readBodyText } from '../http/read-body.js'
import { parseJson } from '../ingest/parse.js'
import type { AudienceSyncRequest, DeletionRequest, Dispatch } from './requests.js'

export type AdminRoute = 'deletions' | 'audiences'

export interface AdminContext {
  adminToken: string
  deletion(request: DeletionRequest): Dispatch
  audience(request: AudienceSyncRequest): Dispatch
}

/** `POST /v1/deletions` and `POST /v1/audiences`: answers once the payloads are queued. */
export async function handleAdmin(route: AdminRoute, request: Request, context: AdminContext): Promise<Response> {
  await requireBearer(request, context.adminToken)
  const body = parseJson(await readBodyText(request)).value
  try {
    const dispatch =
      route === 'deletions'
        ? context.deletion(body as DeletionRequest)
        : context.audience(body as AudienceSyncRequest)
    return jsonResponse(200, { success: true, sources: dispatch.sources, sent: dispatch.payloads.length })
  } catch (error) {
    throw fromMessageError(error, '') ?? error
  }
}
