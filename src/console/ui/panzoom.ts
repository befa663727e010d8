/// <reference lib="dom" />
/**
 * Pan and zoom of an SVG through its viewBox: drag to pan, wheel to zoom around the pointer,
 * and fit / zoom buttons. Nothing is re-laid-out or re-rendered while moving.
 */

export interface ViewBox {
  x: number
  y: number
  width: number
  height: number
}

export class PanZoom {
  readonly #svg: SVGSVGElement
  #content: ViewBox = { x: 0, y: 0, width: 1, height: 1 }
  #view: ViewBox = { x: 0, y: 0, width: 1, height: 1 }
  #drag: { x: number; y: number; view: ViewBox } | null = null
  #moved = false

  constructor(svg: SVGSVGElement) {
    this.#svg = svg
    svg.addEventListener('wheel', (e) => this.#onWheel(e), { passive: false })
    svg.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return
      this.#drag = { x: e.clientX, y: e.clientY, view: { ...this.#view } }
      this.#moved = false
    })
    svg.addEventListener('pointermove', (e) => {
      if (this.#drag === null) return
      const dx = e.clientX - this.#drag.x
      const dy = e.clientY - this.#drag.y
      // A few pixels of jitter during a click is not a pan.
      if (!this.#moved && Math.abs(dx) + Math.abs(dy) < 4) return
      if (!this.#moved) svg.setPointerCapture(e.pointerId)
      this.#moved = true
      const k = this.#scale()
      this.#set({ ...this.#drag.view, x: this.#drag.view.x - dx * k, y: this.#drag.view.y - dy * k })
    })
    const end = (): void => {
      this.#drag = null
    }
    svg.addEventListener('pointerup', end)
    svg.addEventListener('pointercancel', end)
    // A click that ended a pan does not select what is under the pointer.
    svg.addEventListener(
      'click',
      (e) => {
        if (this.#moved) {
          e.stopPropagation()
          this.#moved = false
        }
      },
      true,
    )
  }

  /** The drawing's extent; the view is fitted to it. */
  setContent(box: ViewBox, keepView: boolean): void {
    this.#content = { ...box }
    if (!keepView) this.fit()
  }

  get view(): ViewBox {
    return { ...this.#view }
  }

  fit(): void {
    const c = this.#content
    const margin = 10
    this.#set({
      x: c.x - margin,
      y: c.y - margin,
      width: c.width + 2 * margin,
      height: c.height + 2 * margin,
    })
  }

  /** Zooms by `factor` (>1 zooms in) around a point in drawing coordinates (the centre by default). */
  zoom(factor: number, at?: { x: number; y: number }): void {
    const v = this.#view
    const cx = at?.x ?? v.x + v.width / 2
    const cy = at?.y ?? v.y + v.height / 2
    const width = Math.min(
      Math.max(v.width / factor, 20),
      Math.max(this.#content.width, this.#content.height) * 20,
    )
    const k = width / v.width
    this.#set({ x: cx - (cx - v.x) * k, y: cy - (cy - v.y) * k, width, height: v.height * k })
  }

  /** Drawing units per screen pixel (preserveAspectRatio meet: the larger ratio wins). */
  #scale(): number {
    const r = this.#svg.getBoundingClientRect()
    if (r.width === 0 || r.height === 0) return 1
    return Math.max(this.#view.width / r.width, this.#view.height / r.height)
  }

  #onWheel(e: WheelEvent): void {
    e.preventDefault()
    const pt = this.#svg.createSVGPoint()
    pt.x = e.clientX
    pt.y = e.clientY
    const ctm = this.#svg.getScreenCTM()
    const at = ctm === null ? undefined : pt.matrixTransform(ctm.inverse())
    this.zoom(Math.exp(-e.deltaY * 0.0015), at)
  }

  #set(v: ViewBox): void {
    this.#view = v
    this.#svg.setAttribute('viewBox', `${v.x} ${v.y} ${v.width} ${v.height}`)
  }
}
