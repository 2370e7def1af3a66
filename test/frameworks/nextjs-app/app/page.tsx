import { Tracker } from './tracker'

export default function Home() {
  return (
    <main>
      <h1>Next.js fixture</h1>
      <Tracker />
    </main>
  )
}
