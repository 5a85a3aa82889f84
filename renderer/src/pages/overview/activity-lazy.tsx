/** The activity charts, loaded when first shown: the chart library stays out of the first download. */
import { lazy, Suspense } from 'solid-js';
import { Loading } from '../../ui';

const Panel = lazy(() => import('./activity').then((m) => ({ default: m.ActivityPanel })));

export function ActivityPanel(props: { applicationId?: string }) {
  return (
    <Suspense fallback={<Loading />}>
      <Panel applicationId={props.applicationId} />
    </Suspense>
  );
}
