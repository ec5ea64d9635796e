// What to do with the drift issue, from the analysis: open, update, close or leave it. Pure; the
// issue's text is render's (render/drift-issue.ts), the GitHub calls the Action's.
import type { DriftAnalysis } from './analysis.js';

export type IssueAction = 'create' | 'update' | 'close' | 'none';

/**
 * What to do with the issue: open one when the drift beyond the threshold is confirmed (the same
 * metric beyond it after 2 of the last 3 runs, or surely beyond it after one), and update the open
 * one while the drift exceeds the threshold. Once it no longer does, the open issue is closed
 * only when every metric's interval lies within the threshold — a level hovering at the threshold
 * keeps it open (and updated) instead of closing and reopening it run after run.
 */
export function issueAction(
  analysis: Pick<DriftAnalysis, 'exceeded' | 'trends' | 'confirmed'>,
  hasOpenIssue: boolean,
): IssueAction {
  if (analysis.exceeded.length > 0) {
    if (hasOpenIssue) return 'update';
    return analysis.confirmed ? 'create' : 'none';
  }
  if (!hasOpenIssue) return 'none';
  return analysis.trends.every((t) => t.within) ? 'close' : 'update';
}
