<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN" sourcelanguage="en">
<context>
    <name>MapCellText</name>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>parameter gradients</source>
        <translation>参数梯度</translation>
    </message>
    <message>
        <source>(model)</source>
        <translation>（模型）</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>%1, closed: %2 modules; the worst is %3</source>
        <translation>%1，已折叠：%2 个模块；最差的是 %3</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>steps %1–%2 (worst: step %3)</source>
        <translation>第 %1–%2 步（最差：第 %3 步）</translation>
    </message>
    <message>
        <source>; %1 NaN/Inf</source>
        <translation>；%1 个 NaN/Inf</translation>
    </message>
    <message>
        <source>no update measured (skipped, or no parameters)</source>
        <translation>没有测到更新（被跳过，或没有参数）</translation>
    </message>
    <message>
        <source>update |Δw| / |w| = %1</source>
        <translation>更新量 |Δw| / |w| = %1</translation>
    </message>
    <message>
        <source>%1: nothing observed</source>
        <translation>%1：没有观测到</translation>
    </message>
    <message>
        <source>%1: %2 NaN, %3 +Inf, %4 -Inf of %5 values</source>
        <translation>%1：%5 个值中有 %2 个 NaN、%3 个 +Inf、%4 个 -Inf</translation>
    </message>
    <message>
        <source>%1: largest finite |value| %2 (%3&apos;s largest: %4)%5</source>
        <translation>%1：最大有限 |值| %2（%3 的最大值：%4）%5</translation>
    </message>
    <message>
        <source>%1: largest finite |value| is %2 of %3&apos;s largest%4</source>
        <translation>%1：最大有限 |值| 是 %3 最大值的 %2%4</translation>
    </message>
    <message>
        <source>parameter-gradient norm %1%2</source>
        <translation>参数梯度范数 %1%2</translation>
    </message>
    <message>
        <source>norm %1, largest |value| %2, %3 NaN/Inf</source>
        <translation>范数 %1，最大 |值| %2，%3 个 NaN/Inf</translation>
    </message>
    <message>
        <source>%1
this run: %2
compared run: %3
relative difference %4</source>
        <translation>%1
本次运行：%2
对比运行：%3
相对差异 %4</translation>
    </message>
    <message>
        <source>%1: the compared run has nothing here</source>
        <translation>%1：对比运行在这里没有数据</translation>
    </message>
    <message>
        <source>%1, %2
%3</source>
        <translation>%1，%2
%3</translation>
    </message>
    <message>
        <source>The run file kept no layer detail of these steps (all finite): their 64-step chunk&apos;s largest finite values stand in for them.</source>
        <translation>运行文件没有保留这些步的逐层细节（它们都是有限的）：这里显示的是所在 64 步分块中最大的有限值。</translation>
    </message>
    <message numerus="yes">
        <source>%n of these steps kept no layer detail in the run file (all finite): their 64-step chunk&apos;s largest finite values stand in for them.</source>
        <translation>
            <numerusform>其中 %n 步在运行文件中没有保留逐层细节（它们都是有限的）：以所在 64 步分块中最大的有限值代替。</numerusform>
        </translation>
    </message>
    <message>
        <source>one of the run&apos;s first steps</source>
        <translation>训练开始的前若干步之一</translation>
    </message>
    <message>
        <source>it holds NaN or Inf</source>
        <translation>该步含有 NaN 或 Inf</translation>
    </message>
    <message>
        <source>an overflow forecast</source>
        <translation>有溢出预警</translation>
    </message>
    <message>
        <source>it leads up to a non-finite step, a warning or a control change</source>
        <translation>它位于非有限值步、预警或控制改动之前</translation>
    </message>
    <message>
        <source>it follows a control change</source>
        <translation>它紧随一次控制改动</translation>
    </message>
    <message>
        <source>a capsule of it was saved</source>
        <translation>已为该步保存了胶囊</translation>
    </message>
    <message>
        <source>a regular sample of the healthy steps</source>
        <translation>健康步的定期抽样</translation>
    </message>
    <message>
        <source>From the run file&apos;s chunks of these steps (each layer&apos;s worst over them): zoom in to read single steps.</source>
        <translation>来自运行文件中这些步的数据块（每层取其中最差值）：放大即可读取单步。</translation>
    </message>
    <message>
        <source>The run file keeps this step&apos;s layers in full: %1.</source>
        <translation>运行文件完整保留了该步各层的数据：%1。</translation>
    </message>
</context>
<context>
    <name>OriginText</name>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>update</source>
        <translation>更新</translation>
    </message>
    <message>
        <source>The input batch holds NaN or Inf values; every layer downstream only passes them on.</source>
        <translation>输入批次中含有 NaN 或 Inf；下游的每一层都只是把它们向下传递。</translation>
    </message>
    <message>
        <source>The model&apos;s own forward (outside its modules) made a non-finite value</source>
        <translation>模型自身的 forward（在其子模块之外）产生了非有限值</translation>
    </message>
    <message>
        <source>The model&apos;s own forward received non-finite inputs</source>
        <translation>模型自身的 forward 收到了非有限的输入</translation>
    </message>
    <message>
        <source>Layer &apos;%1&apos; turned finite inputs into non-finite outputs</source>
        <translation>层 &apos;%1&apos; 把有限的输入变成了非有限的输出</translation>
    </message>
    <message>
        <source>Layer &apos;%1&apos; received non-finite inputs</source>
        <translation>层 &apos;%1&apos; 收到了非有限的输入</translation>
    </message>
    <message>
        <source>The model&apos;s outputs are finite but the loss is not</source>
        <translation>模型的输出是有限的，但损失不是</translation>
    </message>
    <message>
        <source>The forward pass is finite; the backward pass of the loss made a non-finite gradient</source>
        <translation>前向传播是有限的；损失的反向传播产生了非有限梯度</translation>
    </message>
    <message>
        <source>The forward pass is finite; the backward pass of the model&apos;s own forward made a non-finite gradient</source>
        <translation>前向传播是有限的；模型自身 forward 的反向传播产生了非有限梯度</translation>
    </message>
    <message>
        <source>The forward pass is finite; the backward pass of layer &apos;%1&apos; made a non-finite gradient</source>
        <translation>前向传播是有限的；层 &apos;%1&apos; 的反向传播产生了非有限梯度</translation>
    </message>
    <message>
        <source>The parameters of layer &apos;%1&apos; were already non-finite before this step</source>
        <translation>层 &apos;%1&apos; 的参数在这一步之前就已经是非有限的</translation>
    </message>
    <message>
        <source>The optimizer update of the previous step made the parameters of layer &apos;%1&apos; non-finite</source>
        <translation>上一步的优化器更新使层 &apos;%1&apos; 的参数变成了非有限值</translation>
    </message>
    <message>
        <source> (first op: %1)</source>
        <translation>（首个算子：%1）</translation>
    </message>
    <message>
        <source>.</source>
        <translation>。</translation>
    </message>
    <message>
        <source>No non-finite value so far.</source>
        <translation>到目前为止没有出现非有限值。</translation>
    </message>
    <message>
        <source>Step %1, phase %2</source>
        <translation>第 %1 步，阶段：%2</translation>
    </message>
    <message>
        <source>, layer &apos;%1&apos; (%2)</source>
        <translation>，层 &apos;%1&apos;（%2）</translation>
    </message>
    <message>
        <source>model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>produced it</source>
        <translation>在此产生</translation>
    </message>
    <message>
        <source>passed it on</source>
        <translation>只是向下传递</translation>
    </message>
    <message>
        <source>, op %1</source>
        <translation>，算子 %1</translation>
    </message>
    <message>
        <source>, at %1</source>
        <translation>，位置 %1</translation>
    </message>
    <message>
        <source> in call %1 of %2</source>
        <translation>（第 %1 次调用，共 %2 次）</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>inputs %1</source>
        <translation>输入 %1</translation>
    </message>
    <message>
        <source>, targets %1</source>
        <translation>，目标 %1</translation>
    </message>
    <message>
        <source>synthetic %1</source>
        <translation>合成 %1</translation>
    </message>
    <message>
        <source> token ids</source>
        <translation> 词元 id</translation>
    </message>
    <message>
        <source>, output %1</source>
        <translation>，输出 %1</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Tensors (*.pt *.pth);;All files (*)</source>
        <translation>张量文件 (*.pt *.pth);;所有文件 (*)</translation>
    </message>
    <message>
        <source>%1 NaN/Inf</source>
        <translation>%1 个 NaN/Inf</translation>
    </message>
    <message>
        <source>Reproduced bit for bit: the failure is deterministic.</source>
        <translation>逐位复现：这个故障是确定性的。</translation>
    </message>
    <message>
        <source>Reproduced numerically: the same non-finite values, others within %1.</source>
        <translation>数值上复现：非有限值相同，其他值相差在 %1 以内。</translation>
    </message>
    <message>
        <source>Not reproduced: computed again, the step differs (a non-deterministic kernel, a race or a hardware fault).</source>
        <translation>未能复现：重新计算时这一步的结果不同（非确定性的内核、竞争条件或硬件故障）。</translation>
    </message>
    <message>
        <source>%1 does not exist.</source>
        <translation>%1 不存在。</translation>
    </message>
    <message>
        <source>%1 is not a file.</source>
        <translation>%1 不是文件。</translation>
    </message>
    <message>
        <source># Your model: %1

`%2`

</source>
        <translation># 你的模型：%1

`%2`

</translation>
    </message>
    <message>
        <source>**Inputs:** %1.</source>
        <translation>**输入：** %1。</translation>
    </message>
    <message>
        <source> The suggested shape came %1.</source>
        <translation> 建议的形状来自%1。</translation>
    </message>
    <message>
        <source>

## What NaNScope does with it

Every module reports, at every step, the health of its output in forward and of the gradient flowing into that output in backward, under the dotted path `named_modules()` gives it. Parameters and buffers that already hold NaN or Inf when the file is loaded are reported by name in the event log at the start of the run.

## What to try

- Start with the recovery policy off and *Pause on non-finite* on: the run stops before the update that would spread the first NaN into the weights, and the origin panel names the layer and the op.
- A layer marked *born here* had finite inputs and a non-finite output: look there first. *Passed on* means it only carried a value born earlier; *weights non-finite*, that an update made its parameters NaN or Inf.
- Lower the learning rate, turn on gradient clipping or switch the precision while paused, then *Retry* the same step to see whether the change fixes it.
</source>
        <translation>

## NaNScope 会做什么

每个模块在每一步都会报告：前向传播中它的输出是否健康，反向传播中流入该输出的梯度是否健康，名称使用 `named_modules()` 给出的点分路径。加载文件时就已经含有 NaN 或 Inf 的参数和缓冲区，会在运行开始时按名称记入事件日志。

## 可以尝试

- 先关闭恢复策略、打开 *遇到非有限值时暂停*：运行会停在把第一个 NaN 扩散进权重的那次更新之前，“来源”面板会指出是哪一层、哪个算子。
- 标为 *在此产生* 的层，输入是有限的而输出不是：先看这里。*向下传递* 表示它只是携带了更早产生的值；*权重非有限* 表示某次更新让它的参数变成了 NaN 或 Inf。
- 暂停时降低学习率、打开梯度裁剪或切换精度，然后 *重试* 同一步，看这个改动能否修好它。
</translation>
    </message>
</context>
<context>
    <name>nanscope::ChallengeBox</name>
    <message>
        <source>Challenge</source>
        <translation>挑战</translation>
    </message>
    <message>
        <source>Hint %1: %2</source>
        <translation>提示 %1：%2</translation>
    </message>
    <message>
        <source>Show a hint (%1 of %2)</source>
        <translation>显示提示（第 %1 条，共 %2 条）</translation>
    </message>
    <message>
        <source>Solved</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>A run of this session met the goal</source>
        <translation>本次会话中的一次运行达成了目标</translation>
    </message>
    <message>
        <source>Not met yet: the last run ended short of the goal.</source>
        <translation>尚未达成：上一次运行结束时没有达到目标。</translation>
    </message>
    <message>
        <source>Not met yet: change the controls, start a run, and the run checks the goal when it ends.</source>
        <translation>尚未达成：调整控制项并开始运行，运行结束时会自动检查是否达到目标。</translation>
    </message>
</context>
<context>
    <name>nanscope::ChallengesDialog</name>
    <message>
        <source>Challenges</source>
        <translation>挑战</translation>
    </message>
    <message>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>Goal</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>This session</source>
        <translation>本次会话</translation>
    </message>
    <message>
        <source>✔ solved</source>
        <translation>✔ 已完成</translation>
    </message>
    <message>
        <source>tried</source>
        <translation>已尝试</translation>
    </message>
    <message>
        <source>not tried</source>
        <translation>未尝试</translation>
    </message>
</context>
<context>
    <name>nanscope::ComparisonPanel</name>
    <message>
        <source>Identical over every step they share.</source>
        <translation>在共有的每一步上都完全相同。</translation>
    </message>
    <message>
        <source>the input batch</source>
        <translation>输入批次</translation>
    </message>
    <message>
        <source>the loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>the %1 of layer &apos;%2&apos;</source>
        <translation>层 &apos;%2&apos; 的%1</translation>
    </message>
    <message>
        <source>Parted at &lt;a href=&quot;%1&quot;&gt;step %1&lt;/a&gt;, in %2: %3.</source>
        <translation>在&lt;a href=&quot;%1&quot;&gt;第 %1 步&lt;/a&gt;分道，位于%2：%3。</translation>
    </message>
    <message>
        <source>Its parameters differ too.</source>
        <translation>它的参数也不同。</translation>
    </message>
    <message>
        <source>The input batches differ.</source>
        <translation>输入批次不同。</translation>
    </message>
    <message>
        <source>%1: never non-finite.</source>
        <translation>%1：从未出现非有限值。</translation>
    </message>
    <message>
        <source>%1: non-finite first at step %2, the runs apart since step %3.</source>
        <translation>%1：第 %2 步首次出现非有限值，两次运行从第 %3 步起已经不同。</translation>
    </message>
    <message>
        <source>%1: non-finite first at step %2, the runs identical until then.</source>
        <translation>%1：第 %2 步首次出现非有限值，在此之前两次运行完全相同。</translation>
    </message>
    <message>
        <source>Setting</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>This run</source>
        <translation>本次运行</translation>
    </message>
    <message>
        <source>Compared run</source>
        <translation>对比运行</translation>
    </message>
    <message>
        <source>The settings in which the two runs differ, and only those</source>
        <translation>两次运行中不同的设置（只列出不同的）</translation>
    </message>
    <message>
        <source>No comparison: File › Compare with… opens a second run beside this one.</source>
        <translation>没有对比：“文件 › 与…对比”可以在本次运行旁打开第二次运行。</translation>
    </message>
    <message>
        <source>%1 is drawn over this run&apos;s plots; the comparison of their steps and settings waits for this run&apos;s file.</source>
        <translation>%1 已画在本次运行的曲线上；逐步和设置的对比要等本次运行的文件写好。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; (%2 steps) against &lt;b&gt;%3&lt;/b&gt; (%4 steps), %5 steps compared bit for bit.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;（%2 步）对比 &lt;b&gt;%3&lt;/b&gt;（%4 步），逐位比较了 %5 步。</translation>
    </message>
    <message>
        <source>Layers only in one run: %1 and %2.</source>
        <translation>只在一次运行中存在的层：%1 和 %2。</translation>
    </message>
    <message>
        <source>The same settings.</source>
        <translation>设置相同。</translation>
    </message>
</context>
<context>
    <name>nanscope::ControlPanel</name>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Steps to train before the run finishes</source>
        <translation>运行结束前要训练的步数</translation>
    </message>
    <message>
        <source>The same seed gives the same run, step for step</source>
        <translation>相同的种子给出逐步相同的运行</translation>
    </message>
    <message>
        <source> steps ahead</source>
        <translation> 步之前</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Warn when a layer&apos;s values would overflow (or vanish, in fp16 and bf16) within this many steps; 0: no forecasts</source>
        <translation>当某层的数值预计在这么多步内溢出（fp16 和 bf16 下还有下溢消失）时发出警告；0：不预测</translation>
    </message>
    <message>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>Forecasts</source>
        <translation>预警</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Live controls (apply at the next step)</source>
        <translation>实时控制（下一步生效）</translation>
    </message>
    <message>
        <source>Clip gradient norm at</source>
        <translation>梯度裁剪阈值（范数）</translation>
    </message>
    <message>
        <source>fp16 with dynamic loss scaling (emulated on the CPU by rounding layer outputs through half)</source>
        <translation>fp16 加动态损失缩放（在 CPU 上把各层输出舍入到半精度来模拟）</translation>
    </message>
    <message>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Recovery policy</source>
        <translation>恢复策略</translation>
    </message>
    <message>
        <source>Quarantine non-finite samples (by index)</source>
        <translation>隔离含非有限值的样本（按索引）</translation>
    </message>
    <message>
        <source>Zero non-finite gradients</source>
        <translation>把非有限梯度置零</translation>
    </message>
    <message>
        <source>On a non-finite loss, roll back and halve the LR</source>
        <translation>损失非有限时回滚并把学习率减半</translation>
    </message>
    <message>
        <source>Rollbacks in a row before the run stops with a message</source>
        <translation>连续回滚多少次后停止运行并给出提示</translation>
    </message>
    <message>
        <source>Pause on non-finite (before the update)</source>
        <translation>遇到非有限值时暂停（在更新之前）</translation>
    </message>
    <message>
        <source>Retries before stopping</source>
        <translation>停止前的重试次数</translation>
    </message>
    <message>
        <source>Scenario &amp;defaults</source>
        <translation>场景默认值(&amp;D)</translation>
    </message>
    <message>
        <source>Set the steps and every control above back to the scenario&apos;s (or model&apos;s) defaults</source>
        <translation>把步数和上面所有控制恢复为场景（或模型）的默认值</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>模型：%1</translation>
    </message>
    <message>
        <source>Recorded loop: %1</source>
        <translation>录制的训练循环：%1</translation>
    </message>
    <message>
        <source>A training loop recorded by nanscope.record (Python): it is watched, not trained here</source>
        <translation>由 nanscope.record（Python）录制的训练循环：这里只观察，不在这里训练</translation>
    </message>
    <message>
        <source>Lesson&apos;s fix</source>
        <translation>课程中的修复</translation>
    </message>
    <message>
        <source>A Python loop runs in the precision its own autocast and dtype give it</source>
        <translation>Python 训练循环的精度由它自己的 autocast 和数据类型决定</translation>
    </message>
</context>
<context>
    <name>nanscope::EventLogModel</name>
    <message>
        <source>info</source>
        <translation>信息</translation>
    </message>
    <message>
        <source>first non-finite</source>
        <translation>首个非有限值</translation>
    </message>
    <message>
        <source>recovery</source>
        <translation>恢复</translation>
    </message>
    <message>
        <source>rollback</source>
        <translation>回滚</translation>
    </message>
    <message>
        <source>control change</source>
        <translation>控制改动</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>%1: %2 → %3</source>
        <translation>%1：%2 → %3</translation>
    </message>
    <message>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>gradient clipping</source>
        <translation>梯度裁剪</translation>
    </message>
    <message>
        <source>pause on non-finite</source>
        <translation>遇到非有限值时暂停</translation>
    </message>
    <message>
        <source>precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>loss scaling</source>
        <translation>损失缩放</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开启</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>; </source>
        <translation>；</translation>
    </message>
    <message>
        <source>the lesson&apos;s fix</source>
        <translation>课程中的修复</translation>
    </message>
</context>
<context>
    <name>nanscope::InputShapeDialog</name>
    <message>
        <source>Inputs for %1</source>
        <translation>%1 的输入</translation>
    </message>
    <message>
        <source>Synthetic inputs of shape</source>
        <translation>合成输入，形状为</translation>
    </message>
    <message>
        <source>Inputs from a file</source>
        <translation>从文件读取输入</translation>
    </message>
    <message>
        <source>batch x features…, e.g. 8x3x64x64</source>
        <translation>批大小 x 特征…，例如 8x3x64x64</translation>
    </message>
    <message>
        <source>Integer token ids, below</source>
        <translation>整数词元 id，小于</translation>
    </message>
    <message>
        <source>For a model that starts with an nn.Embedding: random ids in [0, vocabulary)</source>
        <translation>用于以 nn.Embedding 开头的模型：[0, 词表大小) 中的随机 id</translation>
    </message>
    <message>
        <source>the Embedding&apos;s size</source>
        <translation>Embedding 的大小</translation>
    </message>
    <message>
        <source>optional: inferred from the output&apos;s shape</source>
        <translation>可选：根据输出的形状推断</translation>
    </message>
    <message>
        <source>cross-entropy over the last dimension</source>
        <translation>在最后一维上的交叉熵</translation>
    </message>
    <message>
        <source>mean squared error (regression)</source>
        <translation>均方误差（回归）</translation>
    </message>
    <message>
        <source>the model&apos;s own loss (its output is a scalar)</source>
        <translation>模型自己的损失（其输出是标量）</translation>
    </message>
    <message>
        <source>the first tensor it returns</source>
        <translation>它返回的第一个张量</translation>
    </message>
    <message>
        <source>For a model that returns a tuple, list or dict: the position or key of the output the loss is taken on</source>
        <translation>用于返回元组、列表或字典的模型：用来计算损失的那个输出的位置或键</translation>
    </message>
    <message>
        <source>one shape each, separated by ;  e.g. 8x32:bool</source>
        <translation>每个一个形状，用 ; 分隔，例如 8x32:bool</translation>
    </message>
    <message>
        <source>Synthetic float32 N(0,1), int64 ids below the vocabulary, or bool all false (nothing masked). A file of inputs may instead hold a tuple or dict of all of them.</source>
        <translation>合成的 float32 N(0,1)、小于词表大小的 int64 id，或全为 false 的 bool（什么都不遮盖）。输入文件也可以改为存放包含全部输入的元组或字典。</translation>
    </message>
    <message>
        <source>Further inputs (%1)</source>
        <translation>更多输入（%1）</translation>
    </message>
    <message>
        <source>Input tensors</source>
        <translation>输入张量</translation>
    </message>
    <message>
        <source>Targets</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Target tensors</source>
        <translation>目标张量</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Write the input shape as positive integers separated by x, the batch first: 8x3x64x64.</source>
        <translation>请把输入形状写成用 x 分隔的正整数，批大小在前：8x3x64x64。</translation>
    </message>
    <message>
        <source>Write each further input&apos;s shape like the first, with :int64 or :bool after it for ids or masks, separated by ;</source>
        <translation>每个更多输入的形状按第一个的写法，id 或掩码在后面加 :int64 或 :bool，用 ; 分隔</translation>
    </message>
    <message numerus="yes">
        <source>The model&apos;s forward takes %n further input(s) here.</source>
        <translation>
            <numerusform>这里模型的 forward 还需要 %n 个更多输入。</numerusform>
        </translation>
    </message>
    <message>
        <source>Each further input&apos;s first size is the batch, %1.</source>
        <translation>每个更多输入的第一维都是批大小 %1。</translation>
    </message>
    <message>
        <source>Choose a file of input tensors (torch.save in Python, or torch::save in C++).</source>
        <translation>请选择一个输入张量文件（Python 中用 torch.save，C++ 中用 torch::save 保存）。</translation>
    </message>
    <message>
        <source>%1 is not a file.</source>
        <translation>%1 不是文件。</translation>
    </message>
</context>
<context>
    <name>nanscope::JobController</name>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>Opened job %1: %2 ranks, showing rank %3</source>
        <translation>已打开作业 %1：共 %2 个 rank，显示 rank %3</translation>
    </message>
</context>
<context>
    <name>nanscope::LayerTreeModel</name>
    <message>
        <source>clean</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>passed on</source>
        <translation>向下传递</translation>
    </message>
    <message>
        <source>weights non-finite</source>
        <translation>权重非有限</translation>
    </message>
    <message>
        <source>born here</source>
        <translation>在此产生</translation>
    </message>
    <message>
        <source>finite</source>
        <translation>有限</translation>
    </message>
    <message>
        <source>finite, |max| %1</source>
        <translation>有限，|最大值| %1</translation>
    </message>
    <message>
        <source>passed on from step %1</source>
        <translation>自第 %1 步起向下传递</translation>
    </message>
    <message>
        <source>weights non-finite from step %1</source>
        <translation>自第 %1 步起权重非有限</translation>
    </message>
    <message>
        <source>born here at step %1</source>
        <translation>第 %1 步在此产生</translation>
    </message>
    <message>
        <source>, recovered at step %1</source>
        <translation>，第 %1 步已恢复</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>Gradient</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>First non-finite</source>
        <translation>首个非有限值</translation>
    </message>
</context>
<context>
    <name>nanscope::LearningRateEdit</name>
    <message>
        <source>Learning rate on a log scale, 1e-8 to 1e4</source>
        <translation>对数刻度上的学习率，1e-8 到 1e4</translation>
    </message>
    <message>
        <source>Exact learning rate (scientific notation accepted: 3e-4)</source>
        <translation>精确的学习率（可以用科学计数法：3e-4）</translation>
    </message>
</context>
<context>
    <name>nanscope::LessonPane</name>
    <message>
        <source>There is no lesson for &apos;%1&apos;.</source>
        <translation>&apos;%1&apos; 没有课程。</translation>
    </message>
</context>
<context>
    <name>nanscope::MainWindow</name>
    <message>
        <source>Opened %1: press Start to train it</source>
        <translation>已打开 %1：按“开始”进行训练</translation>
    </message>
    <message>
        <source>Cannot open the model</source>
        <translation>无法打开模型</translation>
    </message>
    <message>
        <source>Controls</source>
        <translation>控制</translation>
    </message>
    <message>
        <source>Filter layers…</source>
        <translation>筛选层…</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Origin</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Lesson</source>
        <translation>课程</translation>
    </message>
    <message>
        <source>Ranks</source>
        <translation>进程（rank）</translation>
    </message>
    <message>
        <source>Comparison</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Event log</source>
        <translation>事件日志</translation>
    </message>
    <message>
        <source>Cannot start the run</source>
        <translation>无法开始运行</translation>
    </message>
    <message>
        <source>The run failed</source>
        <translation>运行失败</translation>
    </message>
    <message>
        <source>following</source>
        <translation>跟随中</translation>
    </message>
    <message>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <source>no steps</source>
        <translation>没有步</translation>
    </message>
    <message>
        <source>%1 steps/s</source>
        <translation>%1 步/秒</translation>
    </message>
    <message>
        <source>&amp;Start</source>
        <translation>开始(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Resume</source>
        <translation>继续(&amp;R)</translation>
    </message>
    <message>
        <source>S&amp;tep</source>
        <translation>单步(&amp;T)</translation>
    </message>
    <message>
        <source>St&amp;op</source>
        <translation>停止(&amp;O)</translation>
    </message>
    <message>
        <source>R&amp;eset</source>
        <translation>重置(&amp;E)</translation>
    </message>
    <message>
        <source>Stop and clear the run (plots, map, tree, log); your controls stay</source>
        <translation>停止并清空本次运行（曲线、热图、层树、日志）；你的控制设置保留</translation>
    </message>
    <message>
        <source>Roll &amp;back</source>
        <translation>回滚(&amp;B)</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>The rank of the opened job whose run the window shows</source>
        <translation>窗口显示的是所打开作业中哪个进程（rank）的运行</translation>
    </message>
    <message>
        <source>Save this step</source>
        <translation>保存这一步</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open model…</source>
        <translation>打开模型(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;run…</source>
        <translation>打开运行(&amp;R)…</translation>
    </message>
    <message>
        <source>Open run</source>
        <translation>打开运行</translation>
    </message>
    <message>
        <source>NaNScope runs (*.nsrun);;All files (*)</source>
        <translation>NaNScope 运行文件 (*.nsrun);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open &amp;job folder…</source>
        <translation>打开作业文件夹(&amp;J)…</translation>
    </message>
    <message>
        <source>Open a job&apos;s run folder</source>
        <translation>打开作业的运行文件夹</translation>
    </message>
    <message>
        <source>Open r&amp;ecent run</source>
        <translation>最近的运行(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Save run as…</source>
        <translation>运行另存为(&amp;S)…</translation>
    </message>
    <message>
        <source>Save run as</source>
        <translation>运行另存为</translation>
    </message>
    <message>
        <source>NaNScope runs (*.nsrun)</source>
        <translation>NaNScope 运行文件 (*.nsrun)</translation>
    </message>
    <message>
        <source>Cannot save the run</source>
        <translation>无法保存运行</translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message>
        <source>&amp;Close run</source>
        <translation>关闭运行(&amp;C)</translation>
    </message>
    <message>
        <source>Com&amp;pare with…</source>
        <translation>与…对比(&amp;P)</translation>
    </message>
    <message>
        <source>Close compa&amp;rison</source>
        <translation>关闭对比(&amp;R)</translation>
    </message>
    <message>
        <source>Export plots as &amp;PNG…</source>
        <translation>导出曲线为 &amp;PNG…</translation>
    </message>
    <message>
        <source>Export plots as P&amp;DF…</source>
        <translation>导出曲线为 P&amp;DF…</translation>
    </message>
    <message>
        <source>Export step data as &amp;CSV…</source>
        <translation>导出逐步数据为 &amp;CSV…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Presentation mode</source>
        <translation>演示模式(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;Log scale</source>
        <translation>对数刻度(&amp;L)</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>PDF files (*.pdf)</source>
        <translation>PDF 文件 (*.pdf)</translation>
    </message>
    <message>
        <source>PNG images (*.png)</source>
        <translation>PNG 图片 (*.png)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <source>Cannot compare the runs</source>
        <translation>无法对比这两次运行</translation>
    </message>
    <message>
        <source>Compare with</source>
        <translation>与…对比</translation>
    </message>
    <message>
        <source>Reading %1 to compare…</source>
        <translation>正在读取 %1 以进行对比…</translation>
    </message>
    <message>
        <source>this run</source>
        <translation>本次运行</translation>
    </message>
    <message>
        <source>compared run</source>
        <translation>对比运行</translation>
    </message>
    <message>
        <source>%1 (compared)</source>
        <translation>%1（对比）</translation>
    </message>
    <message>
        <source>Only a live run recorded into a run file keeps capsules</source>
        <translation>只有记录到运行文件中的实时运行才能保存胶囊</translation>
    </message>
    <message>
        <source>Saving a capsule of the paused step into the run file</source>
        <translation>正在把暂停这一步的胶囊存入运行文件</translation>
    </message>
    <message>
        <source>Saving a capsule of the next step into the run file</source>
        <translation>正在把下一步的胶囊存入运行文件</translation>
    </message>
    <message>
        <source>this run is not recorded in a run file (see the event log)</source>
        <translation>本次运行没有记录在运行文件中（见事件日志）</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>Recording stopped</source>
        <translation>记录已停止</translation>
    </message>
    <message>
        <source> The run goes on unrecorded.</source>
        <translation> 运行继续，但不再记录。</translation>
    </message>
    <message>
        <source>This run is not recorded</source>
        <translation>本次运行没有被记录</translation>
    </message>
    <message>
        <source>Cannot open the run</source>
        <translation>无法打开运行</translation>
    </message>
    <message>
        <source># Recorded run of a model

`%1` (sha256 `%2`), recorded with NaNScope %3 on %4.</source>
        <translation># 一个模型的录制运行

`%1`（sha256 `%2`），由 NaNScope %3 于 %4 录制。</translation>
    </message>
    <message>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <source>A recorded run: its controls were applied when it ran and cannot change it now. File › Close run trains live again.</source>
        <translation>这是录制的运行：它的控制在运行时已经生效，现在无法再改变。“文件 › 关闭运行”可回到实时训练。</translation>
    </message>
    <message>
        <source>NaNScope — %1</source>
        <translation>NaNScope — %1</translation>
    </message>
    <message>
        <source>(none yet)</source>
        <translation>（暂无）</translation>
    </message>
    <message>
        <source>Keep a capsule of the paused step (or of the next step) in the run file, to replay it anywhere</source>
        <translation>把暂停的这一步（或下一步）的胶囊存进运行文件，可在任何地方重放</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>&amp;Challenges…</source>
        <translation>挑战(&amp;C)…</translation>
    </message>
    <message>
        <source>Every scenario&apos;s challenge and whether this session met it</source>
        <translation>每个场景的挑战，以及本次会话是否已完成</translation>
    </message>
    <message>
        <source>Could not read the steps zoomed into: %1</source>
        <translation>无法读取放大区间内的步：%1</translation>
    </message>
    <message>
        <source>stopped without finishing</source>
        <translation>未完成即停止</translation>
    </message>
    <message>
        <source>A Python loop that is recording: the learning rate, clipping, the recovery policy and pause-on-non-finite reach it at its next step.</source>
        <translation>正在记录的 Python 训练循环：学习率、梯度裁剪、恢复策略和“遇非有限值暂停”会在它的下一步生效。</translation>
    </message>
</context>
<context>
    <name>nanscope::MapColourScale</name>
    <message>
        <source>share of NaN/Inf values</source>
        <translation>NaN/Inf 值所占比例</translation>
    </message>
    <message>
        <source>largest |value|</source>
        <translation>最大 |值|</translation>
    </message>
    <message>
        <source>largest |value|; %1 max: off scale</source>
        <translation>最大 |值|；%1 最大值：超出刻度</translation>
    </message>
    <message>
        <source>largest |value| / %1 max</source>
        <translation>最大 |值| / %1 最大值</translation>
    </message>
    <message>
        <source>|Δw| / |w| per step</source>
        <translation>每步 |Δw| / |w|</translation>
    </message>
    <message>
        <source>relative difference (grey: same; red: one non-finite)</source>
        <translation>相对差异（灰：相同；红：一方非有限）</translation>
    </message>
    <message>
        <source>parameter-gradient norm</source>
        <translation>参数梯度范数</translation>
    </message>
    <message>
        <source>finite</source>
        <translation>有限</translation>
    </message>
    <message>
        <source>any</source>
        <translation>少量</translation>
    </message>
    <message>
        <source>half</source>
        <translation>一半</translation>
    </message>
    <message>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <source>%1 max</source>
        <translation>%1 最大值</translation>
    </message>
</context>
<context>
    <name>nanscope::ModelOpener</name>
    <message>
        <source>Open a TorchScript model</source>
        <translation>打开 TorchScript 模型</translation>
    </message>
    <message>
        <source>TorchScript models (*.pt *.pth *.ts *.zip *.ptl);;All files (*)</source>
        <translation>TorchScript 模型 (*.pt *.pth *.ts *.zip *.ptl);;所有文件 (*)</translation>
    </message>
</context>
<context>
    <name>nanscope::NanMapView</name>
    <message>
        <source>Which tensors the map shows: layer outputs, the gradients flowing into them, the layers&apos; parameters, or the parameters&apos; gradients</source>
        <translation>热图显示哪些张量：层的输出、流入输出的梯度、层的参数，或参数的梯度</translation>
    </message>
    <message>
        <source>What a cell shows: the share of NaN/Inf values; the largest finite magnitude (log scale; dark red: overflowed); the headroom, how near the largest value of the run&apos;s precision (1: overflow); the update ratio |Δw|/|w| of each step, usually 1e-4 to 1e-2; the L2 norm of each layer&apos;s parameter gradients; or, while a run is compared, the relative difference from it</source>
        <translation>每个格子显示什么：NaN/Inf 所占比例；最大的有限绝对值（对数刻度；深红：已溢出）；余量，即离本次运行精度的最大值有多近（1：溢出）；每一步的更新比 |Δw|/|w|，通常在 1e-4 到 1e-2 之间；每层参数梯度的 L2 范数；或者在对比时，与对比运行的相对差异</translation>
    </message>
    <message>
        <source>Map of</source>
        <translation>热图对象</translation>
    </message>
    <message>
        <source>as</source>
        <translation>显示为</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>non-finite fraction</source>
        <translation>非有限值比例</translation>
    </message>
    <message>
        <source>magnitude</source>
        <translation>量级</translation>
    </message>
    <message>
        <source>headroom</source>
        <translation>余量</translation>
    </message>
    <message>
        <source>update ratio</source>
        <translation>更新比</translation>
    </message>
    <message>
        <source>gradient norm</source>
        <translation>梯度范数</translation>
    </message>
    <message>
        <source>difference</source>
        <translation>差异</translation>
    </message>
</context>
<context>
    <name>nanscope::OptimizerEdit</name>
    <message>
        <source>the scenario&apos;s own</source>
        <translation>场景自带</translation>
    </message>
    <message>
        <source>SGD or AdamW, as the scenario chooses; AdamW for a model file</source>
        <translation>SGD 或 AdamW，由场景决定；模型文件用 AdamW</translation>
    </message>
    <message>
        <source>SGD&apos;s momentum (0: none)</source>
        <translation>SGD 的动量（0：不用）</translation>
    </message>
    <message>
        <source>Weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <source>Off: the optimizer&apos;s default (0.01 for AdamW, 0 otherwise)</source>
        <translation>关闭：使用优化器的默认值（AdamW 为 0.01，其他为 0）</translation>
    </message>
    <message>
        <source>Momentum</source>
        <translation>动量</translation>
    </message>
</context>
<context>
    <name>nanscope::OriginPanel</name>
    <message>
        <source>S&amp;kip batch</source>
        <translation>跳过批次(&amp;K)</translation>
    </message>
    <message>
        <source>Drop this batch and go on with the next one; the weights stay as they are</source>
        <translation>丢弃这个批次，继续下一个；权重保持不变</translation>
    </message>
    <message>
        <source>Re&amp;try step</source>
        <translation>重试这一步(&amp;T)</translation>
    </message>
    <message>
        <source>Run this batch again with the controls as they are now (change the LR or clipping first)</source>
        <translation>用当前的控制设置重新运行这个批次（先修改学习率或梯度裁剪）</translation>
    </message>
    <message>
        <source>Roll bac&amp;k</source>
        <translation>回滚(&amp;K)</translation>
    </message>
    <message>
        <source>Restore the last state that was checked finite and halve the LR</source>
        <translation>恢复到最近一次确认有限的状态，并把学习率减半</translation>
    </message>
    <message>
        <source>&amp;Continue</source>
        <translation>继续(&amp;C)</translation>
    </message>
    <message>
        <source>Apply the update anyway and go on</source>
        <translation>照常应用更新并继续</translation>
    </message>
    <message>
        <source>No non-finite value so far.</source>
        <translation>到目前为止没有出现非有限值。</translation>
    </message>
    <message>
        <source>Paused before the update of step %1: the weights are untouched.
%2</source>
        <translation>在第 %1 步的更新之前暂停：权重尚未改动。
%2</translation>
    </message>
    <message>
        <source>S&amp;top the loop</source>
        <translation>停止循环(&amp;T)</translation>
    </message>
    <message>
        <source>End the Python loop here: the update is not applied, the run file is closed and the loop gets nanscope.Stopped</source>
        <translation>在此结束 Python 训练循环：不应用本次更新，关闭运行文件，循环收到 nanscope.Stopped</translation>
    </message>
    <message>
        <source>Paused before the update of step %1</source>
        <translation>在第 %1 步更新前暂停</translation>
    </message>
    <message>
        <source>Its gradients are not finite. The loop waits for a decision; its weights are untouched.</source>
        <translation>其梯度含非有限值。训练循环正在等待决定；权重未被改动。</translation>
    </message>
</context>
<context>
    <name>nanscope::PlotPanel</name>
    <message>
        <source>&amp;Log scale</source>
        <translation>对数刻度(&amp;L)</translation>
    </message>
    <message>
        <source>Logarithmic value axes (non-positive values are not drawn; NaN/Inf markers stay)</source>
        <translation>对数数值轴（不绘制非正值；NaN/Inf 标记保留）</translation>
    </message>
    <message>
        <source>&amp;Fit</source>
        <translation>适应(&amp;F)</translation>
    </message>
    <message>
        <source>Show the whole run again and follow new steps (or double-click a plot)</source>
        <translation>重新显示整个运行并跟随新的步（或双击曲线）</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>grad norm</source>
        <translation>梯度范数</translation>
    </message>
    <message>
        <source>lr</source>
        <translation>学习率</translation>
    </message>
    <message>
        <source>loss scale</source>
        <translation>损失缩放</translation>
    </message>
    <message>
        <source>before clipping</source>
        <translation>裁剪前</translation>
    </message>
    <message>
        <source>after clipping</source>
        <translation>裁剪后</translation>
    </message>
    <message>
        <source>update skipped</source>
        <translation>跳过更新</translation>
    </message>
    <message>
        <source>%1, before clipping</source>
        <translation>%1，裁剪前</translation>
    </message>
    <message>
        <source>cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
</context>
<context>
    <name>nanscope::RankLayerModel</name>
    <message>
        <source>Rank %1, step %2</source>
        <translation>Rank %1，第 %2 步</translation>
    </message>
    <message>
        <source>input: %1</source>
        <translation>输入：%1</translation>
    </message>
    <message>
        <source>loss: %1</source>
        <translation>损失：%1</translation>
    </message>
    <message>
        <source>Born here on this rank: %1</source>
        <translation>在这个 rank 上产生于此：%1</translation>
    </message>
    <message>
        <source>op: %1</source>
        <translation>算子：%1</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>unreadable</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <source>Rank %1 has not recorded step %2 (yet)</source>
        <translation>Rank %1（尚未）记录第 %2 步</translation>
    </message>
    <message>
        <source>input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>(model)</source>
        <translation>（模型）</translation>
    </message>
    <message>
        <source>rank %1 ◆</source>
        <translation>rank %1 ◆</translation>
    </message>
    <message>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <source>no step %1 recorded yet</source>
        <translation>尚未记录第 %1 步</translation>
    </message>
    <message>
        <source>finite before the all-reduce</source>
        <translation>all-reduce 之前是有限的</translation>
    </message>
    <message>
        <source>
The rank of the job that went non-finite first.</source>
        <translation>
作业中最先出现非有限值的 rank。</translation>
    </message>
</context>
<context>
    <name>nanscope::RankStepView</name>
    <message>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>The step whose ranks the table shows (clicking the map or a plot picks it too)</source>
        <translation>表格显示哪一步的各个 rank（点击热图或曲线也可以选择）</translation>
    </message>
    <message>
        <source>&amp;First non-finite</source>
        <translation>首个非有限值(&amp;F)</translation>
    </message>
    <message>
        <source>The step where a rank of the job went non-finite first</source>
        <translation>作业中某个 rank 首次出现非有限值的那一步</translation>
    </message>
    <message>
        <source>Open a job&apos;s run folder (File › Open job folder…) to compare its ranks step by step.</source>
        <translation>打开作业的运行文件夹（文件 › 打开作业文件夹…），可以逐步对比它的各个 rank。</translation>
    </message>
    <message>
        <source>Rank %1 went non-finite before the all-reduce: %2.</source>
        <translation>Rank %1 在 all-reduce 之前就出现了非有限值：%2。</translation>
    </message>
    <message>
        <source>Step %1: every rank was finite before the all-reduce.</source>
        <translation>第 %1 步：all-reduce 之前每个 rank 都是有限的。</translation>
    </message>
    <message>
        <source>Finite: rank %1.</source>
        <translation>有限：rank %1。</translation>
    </message>
    <message>
        <source>No record of step %1 (yet): rank %2.</source>
        <translation>（尚）无第 %1 步的记录：rank %2。</translation>
    </message>
    <message>
        <source>The job went non-finite first at step %1, on rank %2.</source>
        <translation>作业在第 %1 步首次出现非有限值，位于 rank %2。</translation>
    </message>
    <message>
        <source>No rank of the job has gone non-finite.</source>
        <translation>作业中没有任何 rank 出现非有限值。</translation>
    </message>
</context>
<context>
    <name>nanscope::RecordedLoopPage</name>
    <message>
        <source># A recorded Python loop

`%1`, recorded by nanscope.record %2 with torch %3 and Python %4 on %5, %6.

</source>
        <translation># 一个记录下来的 Python 训练循环

`%1`，由 nanscope.record %2 在 %5 上记录（torch %3，Python %4），%6。

</translation>
    </message>
    <message>
        <source>- Model: `%1`, %2 parameters (%3), %4 modules
</source>
        <translation>- 模型：`%1`，%2 个参数（%3），%4 个模块
</translation>
    </message>
    <message>
        <source>- Optimizer: not given to the recorder
</source>
        <translation>- 优化器：未交给记录器
</translation>
    </message>
    <message>
        <source>- Optimizer: %1 (%2)
</source>
        <translation>- 优化器：%1（%2）
</translation>
    </message>
    <message>
        <source>- Loss scaler: %1
</source>
        <translation>- 损失缩放器：%1
</translation>
    </message>
    <message>
        <source>- A non-finite update: %1 (`on_nonfinite`)
</source>
        <translation>- 遇到非有限更新时：%1（`on_nonfinite`）
</translation>
    </message>
    <message>
        <source>- While it runs: `nanscope steer %1` changes its learning rate, clipping or guard
</source>
        <translation>- 运行期间：`nanscope steer %1` 可修改其学习率、梯度裁剪或防护策略
</translation>
    </message>
    <message>
        <source>- Not measured: %1
</source>
        <translation>- 未测量：%1
</translation>
    </message>
</context>
<context>
    <name>nanscope::ReplayView</name>
    <message>
        <source>Re&amp;play this step</source>
        <translation>重放这一步(&amp;P)</translation>
    </message>
    <message>
        <source>Compute the step again from its capsule in the run file: is the failure deterministic, which samples cause it, which change would have kept it finite?</source>
        <translation>用运行文件中的胶囊重新计算这一步：故障是确定性的吗？是哪些样本导致的？什么改动能让它保持有限？</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>改动</translation>
    </message>
    <message>
        <source>From</source>
        <translation>原值</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Replaying: %1…</source>
        <translation>正在重放：%1…</translation>
    </message>
    <message>
        <source>Cannot replay: %1</source>
        <translation>无法重放：%1</translation>
    </message>
    <message>
        <source>Step %1 (%2, %3 thread(s)): %4</source>
        <translation>第 %1 步（%2，%3 个线程）：%4</translation>
    </message>
    <message>
        <source>First layer that differs: &apos;%1&apos; (%2).</source>
        <translation>第一个不同的层：&apos;%1&apos;（%2）。</translation>
    </message>
    <message>
        <source>Born in op %1 of &apos;%2&apos;.</source>
        <translation>产生于 &apos;%2&apos; 的算子 %1。</translation>
    </message>
    <message>
        <source>Samples that make it non-finite: %1 (%2 replays).</source>
        <translation>导致非有限值的样本：%1（重放 %2 次）。</translation>
    </message>
    <message>
        <source>finite</source>
        <translation>有限</translation>
    </message>
    <message>
        <source>non-finite</source>
        <translation>非有限</translation>
    </message>
    <message>
        <source>the step</source>
        <translation>这一步</translation>
    </message>
    <message>
        <source>the snapshot</source>
        <translation>快照</translation>
    </message>
</context>
<context>
    <name>nanscope::RunFiles</name>
    <message>
        <source>there is no run to save yet</source>
        <translation>还没有可保存的运行</translation>
    </message>
    <message>
        <source>this run was not recorded into a run file (see the event log): there is nothing to export</source>
        <translation>本次运行没有记录到运行文件中（见事件日志）：没有可导出的内容</translation>
    </message>
    <message>
        <source>%1: cannot write the CSV file</source>
        <translation>%1：无法写入 CSV 文件</translation>
    </message>
    <message>
        <source>%1: writing the CSV file failed (is the disk full?)</source>
        <translation>%1：写入 CSV 文件失败（磁盘满了吗？）</translation>
    </message>
</context>
<context>
    <name>nanscope::ScenarioFixEdit</name>
    <message>
        <source>takes effect at the next Start</source>
        <translation>在下一次“开始”时生效</translation>
    </message>
    <message>
        <source>takes effect at the next step</source>
        <translation>在下一步生效</translation>
    </message>
    <message>
        <source>%1 (at Start)</source>
        <translation>%1（开始时生效）</translation>
    </message>
    <message>
        <source>The fix the lesson teaches: %1; %2</source>
        <translation>课程讲授的修复：%1；%2</translation>
    </message>
    <message>
        <source>%1 of the fix (a number above 0, such as 1e-6)</source>
        <translation>修复的 %1（大于 0 的数，例如 1e-6）</translation>
    </message>
</context>
<context>
    <name>nanscope::core</name>
    <message>
        <source>Huge learning rate with cross-entropy: the loss oscillates but stays finite</source>
        <translation>交叉熵配合极大的学习率：损失剧烈振荡，但仍保持有限</translation>
    </message>
    <message>
        <source>Learning rate above 2/curvature on an MSE regression: divergence to Inf, then NaN</source>
        <translation>MSE 回归的学习率超过 2/曲率：发散到 Inf，随后变成 NaN</translation>
    </message>
    <message>
        <source>A NaN and an Inf in the training data poison BatchNorm and then every weight</source>
        <translation>训练数据中的一个 NaN 和一个 Inf 污染了 BatchNorm，继而污染了每一个权重</translation>
    </message>
    <message>
        <source>log() of softmax probabilities that underflowed to exactly 0</source>
        <translation>对下溢到恰好为 0 的 softmax 概率取 log()</translation>
    </message>
    <message>
        <source>stable log</source>
        <translation>稳定的 log</translation>
    </message>
    <message>
        <source>clamps the probabilities to at least eps before the loss takes their log</source>
        <translation>在损失取 log 之前，把概率截断到不小于 eps</translation>
    </message>
    <message>
        <source>BatchNorm with eps=0 over a feature that is constant across the batch: 0/0</source>
        <translation>eps=0 的 BatchNorm 遇到在整个批次中恒定的特征：0/0</translation>
    </message>
    <message>
        <source>BatchNorm eps</source>
        <translation>BatchNorm 的 eps</translation>
    </message>
    <message>
        <source>sets BatchNorm&apos;s eps, added to the variance before the division</source>
        <translation>设置 BatchNorm 的 eps，在除法之前加到方差上</translation>
    </message>
    <message>
        <source>sqrt at exactly 0: a finite forward pass, NaN born in backward</source>
        <translation>在恰好为 0 处求 sqrt：前向传播有限，NaN 诞生于反向传播</translation>
    </message>
    <message>
        <source>eps in the sqrt</source>
        <translation>sqrt 中的 eps</translation>
    </message>
    <message>
        <source>takes sqrt(sum(x^2) + eps), whose derivative is finite at 0</source>
        <translation>改为计算 sqrt(sum(x^2) + eps)，它在 0 处的导数是有限的</translation>
    </message>
    <message>
        <source>30-layer ReLU MLP with a too-large init: activations overflow deep in the net</source>
        <translation>初始化过大的 30 层 ReLU MLP：激活值在网络深处溢出</translation>
    </message>
    <message>
        <source>He init</source>
        <translation>He 初始化</translation>
    </message>
    <message>
        <source>initialises each layer with He&apos;s std sqrt(2 / fan_in) instead of 4</source>
        <translation>用 He 初始化的标准差 sqrt(2 / fan_in) 代替 4 来初始化每一层</translation>
    </message>
    <message>
        <source>The nan-input data trained with the full recovery policy: quarantine, clip, roll back</source>
        <translation>用完整的恢复策略训练 nan-input 的数据：隔离、裁剪、回滚</translation>
    </message>
    <message>
        <source>Prices in dollars as fp16 regression targets: the loss scaler backs off, then outputs pass 65504</source>
        <translation>以美元为单位的价格作为 fp16 回归目标：损失缩放器不断回退，随后输出超过 65504</translation>
    </message>
    <message>
        <source>normalised targets</source>
        <translation>归一化的目标值</translation>
    </message>
    <message>
        <source>trains on (price - mean) / std instead of dollars</source>
        <translation>用 (价格 - 均值) / 标准差 代替美元进行训练</translation>
    </message>
    <message>
        <source>A hand-written softmax exp(x) / sum(exp(x)) over logits past 88: Inf / Inf in forward</source>
        <translation>手写的 softmax exp(x) / sum(exp(x)) 遇到超过 88 的 logits：前向传播中出现 Inf / Inf</translation>
    </message>
    <message>
        <source>stable softmax</source>
        <translation>稳定的 softmax</translation>
    </message>
    <message>
        <source>subtracts each row&apos;s largest logit before exp and takes the log in log space</source>
        <translation>在 exp 之前减去每行最大的 logit，并在对数空间中取 log</translation>
    </message>
    <message>
        <source>ReLU scores divided by their sum: a sample with no positive score gives 0 / 0</source>
        <translation>ReLU 分数除以它们的和：没有正分数的样本得到 0 / 0</translation>
    </message>
    <message>
        <source>eps in the divisor</source>
        <translation>除数中的 eps</translation>
    </message>
    <message>
        <source>divides by sum + eps</source>
        <translation>改为除以 和 + eps</translation>
    </message>
    <message>
        <source>nan_to_num hides bad sensor data: the loss stays finite while the input scale&apos;s weights turn NaN</source>
        <translation>nan_to_num 掩盖了坏的传感器数据：损失保持有限，而输入缩放层的权重变成了 NaN</translation>
    </message>
    <message>
        <source>Train 200 steps with a mean loss below 1.8 over the last 20 steps.</source>
        <translation>训练 200 步，并使最后 20 步的平均损失低于 1.8。</translation>
    </message>
    <message>
        <source>The loss stays finite, yet it jumps around far above where it started: what makes each step so large?</source>
        <translation>损失保持有限，却在远高于起点的地方来回跳动：是什么让每一步都迈得这么大？</translation>
    </message>
    <message>
        <source>The learning rate of 100 overshoots the minimum at every step.</source>
        <translation>学习率 100 让每一步都越过了最小值。</translation>
    </message>
    <message>
        <source>Set the learning rate to 0.1 and start again.</source>
        <translation>把学习率设为 0.1，然后重新开始。</translation>
    </message>
    <message>
        <source>Train 200 steps without a non-finite step, with a learning rate of at least 0.1 at the end.</source>
        <translation>训练 200 步且没有任何一步出现非有限值，结束时学习率不低于 0.1。</translation>
    </message>
    <message>
        <source>Watch the loss in the first steps: it grows by a constant factor each step before it overflows.</source>
        <translation>观察最初几步的损失：在溢出之前，它每一步都按固定倍数增长。</translation>
    </message>
    <message>
        <source>A step larger than 2 / curvature makes every update overshoot by more than it corrects.</source>
        <translation>步长大于 2 / 曲率时，每次更新越过的距离都比它修正的还多。</translation>
    </message>
    <message>
        <source>Set the learning rate to 0.1 (or keep 1.0 and clip the gradient norm to 1) and start again.</source>
        <translation>把学习率设为 0.1（或者保持 1.0 并把梯度范数裁剪到 1），然后重新开始。</translation>
    </message>
    <message>
        <source>Train 60 steps to a finite model while throwing away no more than the two bad samples and never rolling back.</source>
        <translation>训练 60 步得到一个有限的模型，丢弃的样本不超过那两个坏样本，并且从不回滚。</translation>
    </message>
    <message>
        <source>The origin says the first non-finite value comes from the input itself, not from a layer.</source>
        <translation>来源面板显示，第一个非有限值来自输入本身，而不是某一层。</translation>
    </message>
    <message>
        <source>Two samples of the data hold a NaN and an Inf; every batch that draws them poisons BatchNorm.</source>
        <translation>数据中有两个样本分别含有 NaN 和 Inf；每个抽到它们的批次都会污染 BatchNorm。</translation>
    </message>
    <message>
        <source>Train 30 steps without a non-finite step, keeping the hand-written log-loss.</source>
        <translation>保留手写的 log 损失，训练 30 步且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>The probabilities are finite; look at which op turns them into -Inf.</source>
        <translation>概率本身是有限的；看看是哪个算子把它们变成了 -Inf。</translation>
    </message>
    <message>
        <source>Softmax underflows to exactly 0, and log(0) = -Inf; 0 * -Inf is NaN in the loss.</source>
        <translation>Softmax 下溢到恰好为 0，而 log(0) = -Inf；损失中的 0 * -Inf 就是 NaN。</translation>
    </message>
    <message>
        <source>Train 30 steps without a non-finite step, keeping the constant feature and the BatchNorm.</source>
        <translation>保留恒定的特征和 BatchNorm，训练 30 步且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>The map lights up in the BatchNorm layer at the very first step.</source>
        <translation>热力图在第一步就在 BatchNorm 层亮了起来。</translation>
    </message>
    <message>
        <source>One feature never varies: its variance is 0, and BatchNorm divides 0 by sqrt(0 + eps) with eps = 0.</source>
        <translation>有一个特征从不变化：它的方差是 0，而 eps = 0 时 BatchNorm 会用 0 除以 sqrt(0 + eps)。</translation>
    </message>
    <message>
        <source>Train 30 steps without a non-finite gradient.</source>
        <translation>训练 30 步且不出现非有限的梯度。</translation>
    </message>
    <message>
        <source>The forward pass is finite: the NaN is born in backward.</source>
        <translation>前向传播是有限的：NaN 诞生于反向传播。</translation>
    </message>
    <message>
        <source>Zero-padded samples reach sqrt at exactly 0, whose derivative 1 / (2 sqrt(0)) is Inf.</source>
        <translation>补零的样本让 sqrt 的输入恰好为 0，其导数 1 / (2 sqrt(0)) 是 Inf。</translation>
    </message>
    <message>
        <source>Train 100 steps of the 30-layer network without a non-finite step.</source>
        <translation>把这个 30 层的网络训练 100 步，且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>Compare the activations layer by layer in the map: each layer makes them about 20 times larger.</source>
        <translation>在热力图中逐层比较激活值：每一层都让它们变大约 20 倍。</translation>
    </message>
    <message>
        <source>No learning rate or clipping helps: the very first forward pass overflows, before any update.</source>
        <translation>调学习率或梯度裁剪都没有用：在任何更新之前，第一次前向传播就已经溢出。</translation>
    </message>
    <message>
        <source>Train 200 steps to a finite model with the least recovery: quarantine only, no clipping, no zeroed gradients, no rollback.</source>
        <translation>用最少的恢复手段训练 200 步得到有限的模型：只隔离样本，不裁剪、不把梯度置零、不回滚。</translation>
    </message>
    <message>
        <source>The full policy is on: which of its parts does this data really need?</source>
        <translation>完整的恢复策略都打开了：这份数据真正需要的是其中哪一部分？</translation>
    </message>
    <message>
        <source>Only two samples are bad, and nothing else in this model overflows.</source>
        <translation>只有两个样本是坏的，这个模型里没有别的东西会溢出。</translation>
    </message>
    <message>
        <source>Train 300 steps in fp16 with a finite loss over the last 20 steps and no more than 10 steps skipped by the loss scaler.</source>
        <translation>用 fp16 训练 300 步，最后 20 步的损失都有限，并且被损失缩放器跳过的步数不超过 10。</translation>
    </message>
    <message>
        <source>The loss scaler backs off again and again: is it the gradients or the outputs that overflow?</source>
        <translation>损失缩放器一次又一次地回退：溢出的是梯度还是输出？</translation>
    </message>
    <message>
        <source>The targets are prices of about 100,000 dollars; fp16 ends at 65504.</source>
        <translation>目标值是大约 100,000 美元的价格；而 fp16 的上限是 65504。</translation>
    </message>
    <message>
        <source>Train 30 steps without a non-finite step, keeping the raw pixel inputs.</source>
        <translation>保留原始像素输入，训练 30 步且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>The origin names exp inside the softmax.</source>
        <translation>来源面板指出的是 softmax 里面的 exp。</translation>
    </message>
    <message>
        <source>Logits of a few hundred: exp overflows past 88.7, and Inf / Inf is NaN.</source>
        <translation>logits 有几百：exp 在超过 88.7 时溢出，而 Inf / Inf 就是 NaN。</translation>
    </message>
    <message>
        <source>Train 30 steps without a non-finite step, keeping the ReLU scores.</source>
        <translation>保留 ReLU 分数，训练 30 步且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>Only a few samples fail: look at which op in normalize produced the NaN.</source>
        <translation>只有少数样本出错：看看 normalize 中是哪个算子产生了 NaN。</translation>
    </message>
    <message>
        <source>A sample with no positive score sums to 0, and 0 / 0 is NaN.</source>
        <translation>没有正分数的样本，其分数之和为 0，而 0 / 0 就是 NaN。</translation>
    </message>
    <message>
        <source>Train 100 steps with every weight finite and a mean loss below 0.5 over the last 20 steps.</source>
        <translation>训练 100 步，所有权重保持有限，并使最后 20 步的平均损失低于 0.5。</translation>
    </message>
    <message>
        <source>The loss is finite, but look at the map and at the scale layer&apos;s parameters.</source>
        <translation>损失是有限的，但请看看热力图以及 scale 层的参数。</translation>
    </message>
    <message>
        <source>nan_to_num hides the bad samples from the loss, not from the gradient of the scale&apos;s weights.</source>
        <translation>nan_to_num 只是对损失隐藏了坏样本，却没有对 scale 层权重的梯度隐藏它们。</translation>
    </message>
    <message>
        <source>Turn on &quot;Quarantine non-finite samples&quot; in the recovery policy (--recovery skip) and start again.</source>
        <translation>在恢复策略中打开“隔离含非有限值的样本”（--recovery skip），然后重新开始。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), the stable log: probabilities clamped to at least eps.</source>
        <translation>打开课程中的修复（--fix）——稳定的 log：把概率截断到不小于 eps。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), BatchNorm&apos;s eps: 1e-5 is PyTorch&apos;s default.</source>
        <translation>打开课程中的修复（--fix）——BatchNorm 的 eps：1e-5 是 PyTorch 的默认值。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), an eps inside the sqrt.</source>
        <translation>打开课程中的修复（--fix）：在 sqrt 里加一个 eps。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), He&apos;s initialisation, and start again.</source>
        <translation>打开课程中的修复（--fix）——He 初始化，然后重新开始。</translation>
    </message>
    <message>
        <source>Keep only &quot;Quarantine non-finite samples&quot; in the recovery policy (--recovery skip), turn clipping off, and start again.</source>
        <translation>恢复策略中只保留“隔离含非有限值的样本”（--recovery skip），关闭梯度裁剪，然后重新开始。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), normalised targets, and start again in fp16.</source>
        <translation>打开课程中的修复（--fix）——归一化的目标值，然后用 fp16 重新开始。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), the stable softmax: shifted by the row maximum, in log space.</source>
        <translation>打开课程中的修复（--fix）——稳定的 softmax：减去每行最大值，并在对数空间中计算。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), an eps in the divisor.</source>
        <translation>打开课程中的修复（--fix）：在除数中加一个 eps。</translation>
    </message>
    <message>
        <source>Turn on &quot;Quarantine non-finite samples&quot; (--recovery skip) so that the six bad samples never reach the model.</source>
        <translation>打开“隔离含非有限值的样本”（--recovery skip），让这六个坏样本永远到不了模型。</translation>
    </message>
    <message>
        <source>A predicted variance with nothing to keep it positive: sqrt of a negative number in forward</source>
        <translation>预测出的方差没有任何约束保证为正：前向传播中对负数开平方</translation>
    </message>
    <message>
        <source>positive variance</source>
        <translation>为正的方差</translation>
    </message>
    <message>
        <source>computes the variance as softplus(v) + 1e-6, positive for any v</source>
        <translation>把方差计算为 softplus(v) + 1e-6，对任何 v 都为正</translation>
    </message>
    <message>
        <source>Train 100 steps without a non-finite step, keeping the Gaussian likelihood and its variance head.</source>
        <translation>保留高斯似然及其方差输出，训练 100 步且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>The origin names sqrt in the gaussian layer: what number did it get?</source>
        <translation>来源面板指出的是 gaussian 层中的 sqrt：它拿到的是什么数？</translation>
    </message>
    <message>
        <source>The head&apos;s second output is a variance, yet nothing keeps it above 0, and the samples with little noise pull it down harder the smaller it gets.</source>
        <translation>输出层的第二个输出是方差，却没有任何东西保证它大于 0；而噪声很小的样本会把它往下拉，方差越小拉得越狠。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix), a positive variance: softplus(v) + 1e-6.</source>
        <translation>打开课程中的修复（--fix）——为正的方差：softplus(v) + 1e-6。</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>finished</source>
        <translation>已结束</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>run %1: %2 on %3, %4, %5</source>
        <translation>运行 %1：%2，设备 %3，%4，%5</translation>
    </message>
    <message>
        <source>batch skipped</source>
        <translation>已跳过该批次</translation>
    </message>
    <message>
        <source>retrying the step</source>
        <translation>正在重试这一步</translation>
    </message>
    <message>
        <source>quarantined samples %1</source>
        <translation>已隔离样本 %1</translation>
    </message>
    <message>
        <source>non-finite gradient entries set to 0</source>
        <translation>非有限的梯度元素已置为 0</translation>
    </message>
    <message>
        <source>restored the state of step %1 (parameters, buffers, optimizer)</source>
        <translation>已恢复第 %1 步的状态（参数、缓冲区、优化器）</translation>
    </message>
    <message>
        <source>non-finite loss: restored the state of step %1 (parameters, buffers, optimizer), lr halved to %2</source>
        <translation>损失非有限：已恢复第 %1 步的状态（参数、缓冲区、优化器），学习率减半为 %2</translation>
    </message>
    <message>
        <source>no checked-finite snapshot to restore</source>
        <translation>没有可恢复的、经检查为有限的快照</translation>
    </message>
    <message>
        <source>non-finite loss and no checked-finite snapshot: update skipped</source>
        <translation>损失非有限，且没有经检查为有限的快照：已跳过本次更新</translation>
    </message>
    <message>
        <source>capsule of step %1 (%2): %3 KiB</source>
        <translation>第 %1 步的胶囊（%2）：%3 KiB</translation>
    </message>
    <message>
        <source>capsule of step %1 (%2): %3 KiB, with the checked-finite state of step %4 and the batches since</source>
        <translation>第 %1 步的胶囊（%2）：%3 KiB，含第 %4 步经检查为有限的状态及其后的批次</translation>
    </message>
    <message>
        <source>saved the model to %1</source>
        <translation>模型已保存到 %1</translation>
    </message>
    <message>
        <source>%1 output grows x%2 a step: %3 overflow in about %4 steps</source>
        <translation>%1 的输出每步增长 x%2：大约 %4 步后 %3 溢出</translation>
    </message>
    <message>
        <source>%1 output grows x%2 a step: %3 overflow in about 1 step</source>
        <translation>%1 的输出每步增长 x%2：大约 1 步后 %3 溢出</translation>
    </message>
    <message>
        <source>the loss grows x%2 a step: %3 overflow in about %4 steps</source>
        <translation>损失每步增长 x%2：大约 %4 步后 %3 溢出</translation>
    </message>
    <message>
        <source>the loss grows x%2 a step: %3 overflow in about 1 step</source>
        <translation>损失每步增长 x%2：大约 1 步后 %3 溢出</translation>
    </message>
    <message>
        <source>%1 output shrinks x%2 a step: below %3&apos;s smallest value (%4) it rounds to 0 in about %5 steps</source>
        <translation>%1 的输出每步缩小 x%2：低于 %3 的最小值（%4）时会舍入为 0，大约还有 %5 步</translation>
    </message>
    <message>
        <source>%1 output shrinks x%2 a step: below %3&apos;s smallest value (%4) it rounds to 0 in about 1 step</source>
        <translation>%1 的输出每步缩小 x%2：低于 %3 的最小值（%4）时会舍入为 0，大约还有 1 步</translation>
    </message>
    <message>
        <source>the gradient into %1 shrinks x%2 a step: below %3&apos;s smallest value (%4) it rounds to 0 in about %5 steps</source>
        <translation>流入 %1 的梯度每步缩小 x%2：低于 %3 的最小值（%4）时会舍入为 0，大约还有 %5 步</translation>
    </message>
    <message>
        <source>the gradient into %1 shrinks x%2 a step: below %3&apos;s smallest value (%4) it rounds to 0 in about 1 step</source>
        <translation>流入 %1 的梯度每步缩小 x%2：低于 %3 的最小值（%4）时会舍入为 0，大约还有 1 步</translation>
    </message>
    <message>
        <source>%1 weights move by %2 times their size a step (%3 steps running; usual: 1e-4 to 1e-2): updates this large diverge, lower the learning rate</source>
        <translation>%1 的权重每步变化达到自身大小的 %2 倍（已连续 %3 步；通常为 1e-4 到 1e-2）：这么大的更新会发散，请降低学习率</translation>
    </message>
    <message>
        <source>%1 weights barely move: |dw| / |w| is %2 (%3 steps running; usual: 1e-4 to 1e-2): updates this small are lost to rounding, raise the learning rate</source>
        <translation>%1 的权重几乎不动：|dw| / |w| 为 %2（已连续 %3 步；通常为 1e-4 到 1e-2）：这么小的更新会被舍入吞掉，请提高学习率</translation>
    </message>
    <message>
        <source>the loss scale fell to %1 and keeps falling: gradients overflow fp16 even unscaled, and the scaler has nothing left to give</source>
        <translation>损失缩放系数降到了 %1 且仍在下降：梯度即使不缩放也会让 fp16 溢出，缩放器已无能为力</translation>
    </message>
    <message>
        <source>Seconds per click of a session that never clicked: a positive number divided by 0 is Inf</source>
        <translation>从未点击的会话的每次点击秒数：正数除以 0 得到 Inf</translation>
    </message>
    <message>
        <source>at least one click</source>
        <translation>至少一次点击</translation>
    </message>
    <message>
        <source>divides by max(clicks, 1), so a session without a click counts one</source>
        <translation>改为除以 max(点击次数, 1)，没有点击的会话按一次计算</translation>
    </message>
    <message>
        <source>Train 60 steps without a non-finite step, keeping every session and the seconds-per-click feature.</source>
        <translation>保留所有会话和“每次点击秒数”这个特征，训练 60 步且没有任何一步出现非有限值。</translation>
    </message>
    <message>
        <source>The origin names a division in the features layer, and the value it made is +Inf, not NaN.</source>
        <translation>来源面板指出的是 features 层中的一次除法，而它产生的值是 +Inf，不是 NaN。</translation>
    </message>
    <message>
        <source>A few sessions have 0 clicks: their duration divided by 0 is +Inf, and the next layer turns Inf into NaN.</source>
        <translation>有几个会话的点击次数为 0：它们的时长除以 0 得到 +Inf，下一层再把 Inf 变成 NaN。</translation>
    </message>
    <message>
        <source>Turn on the lesson&apos;s fix (--fix): divide by max(clicks, 1).</source>
        <translation>打开课程中的修复（--fix）：改为除以 max(点击次数, 1)。</translation>
    </message>
    <message>
        <source>%1 couple the samples of a batch: bisected with their batch statistics held as recorded</source>
        <translation>%1 把一个批次中的样本耦合在一起：二分时按记录保持它们的批统计量</translation>
    </message>
    <message>
        <source>%1: the recorded batch statistics are non-finite (the bad samples reached them), so they cannot be held; each subset is normalised by its own</source>
        <translation>%1：记录下来的批统计量是非有限的（坏样本已经影响到它们），因此无法保持；每个子集按自己的统计量归一化</translation>
    </message>
    <message>
        <source>no particular samples: the step fails on any of them alone (%1 replays)</source>
        <translation>不是特定的样本：这一步单独用其中任何一个样本都会失败（重放 %1 次）</translation>
    </message>
    <message>
        <source>the samples %1 fail only together: neither half of them makes the step non-finite alone</source>
        <translation>样本 %1 只有在一起时才会失败：其中任何一半单独都不会让这一步变成非有限</translation>
    </message>
    <message>
        <source>the capsule holds no checked-finite state before the step: no change was tried from a snapshot</source>
        <translation>胶囊中没有这一步之前经检查为有限的状态：没有从快照尝试任何改动</translation>
    </message>
    <message>
        <source>this machine has no CUDA device: replayed on the CPU</source>
        <translation>这台机器没有 CUDA 设备：已在 CPU 上重放</translation>
    </message>
    <message>
        <source>replayed with %1 threads; recorded with %2</source>
        <translation>用 %1 个线程重放；记录时用了 %2 个</translation>
    </message>
    <message>
        <source>recorded on %1, replayed on %2</source>
        <translation>在 %1 上记录，在 %2 上重放</translation>
    </message>
    <message>
        <source>recorded with LibTorch %1, replayed with %2: kernels may round differently</source>
        <translation>用 LibTorch %1 记录，用 %2 重放：内核的舍入方式可能不同</translation>
    </message>
    <message>
        <source>the scenario&apos;s data regenerated from the seed differs from what step %1 trained on: no change is tried from the snapshot</source>
        <translation>由种子重新生成的场景数据与第 %1 步训练时用的不同：不从快照尝试任何改动</translation>
    </message>
    <message>
        <source>non-finite in %1</source>
        <translation>在%1中出现非有限值</translation>
    </message>
    <message>
        <source>non-finite in %1 of %2</source>
        <translation>在 %2 的%1中出现非有限值</translation>
    </message>
    <message>
        <source>the update made the parameters non-finite</source>
        <translation>这次更新让参数变成了非有限值</translation>
    </message>
    <message>
        <source>the capsule holds no checked-finite state before the step</source>
        <translation>胶囊中没有这一步之前经检查为有限的状态</translation>
    </message>
    <message>
        <source>non-finite at step %1</source>
        <translation>第 %1 步出现非有限值</translation>
    </message>
    <message>
        <source>the last update made the parameters non-finite</source>
        <translation>最后一次更新让参数变成了非有限值</translation>
    </message>
    <message>
        <source>loss scale grew to %1 after %2 clean steps</source>
        <translation>连续 %2 步没有溢出，损失缩放系数增大到 %1</translation>
    </message>
    <message>
        <source>%1 gradients overflowed at loss scale %2: update skipped, scale now %3</source>
        <translation>%1 的梯度在损失缩放系数 %2 下溢出：已跳过本次更新，缩放系数现为 %3</translation>
    </message>
    <message>
        <source>fp16 (emulated on CPU)</source>
        <translation>fp16（在 CPU 上模拟）</translation>
    </message>
    <message>
        <source>rank %1 of %2: joining the job at %3:%4</source>
        <translation>第 %1 号进程（共 %2 个）：在 %3:%4 加入作业</translation>
    </message>
    <message>
        <source>rank %1: collectives over %2</source>
        <translation>第 %1 号进程：集合通信使用 %2</translation>
    </message>
    <message>
        <source>non-finite before the all-reduce on %1: step skipped on every rank</source>
        <translation>在 all-reduce 之前出现非有限值（%1）：所有进程都跳过了这一步</translation>
    </message>
    <message>
        <source>non-finite before the all-reduce on %1: applied without its gradients, averaged over the other ranks</source>
        <translation>在 all-reduce 之前出现非有限值（%1）：不计其梯度，按其余进程的平均值更新</translation>
    </message>
    <message>
        <source>parameters identical on all %1 ranks</source>
        <translation>全部 %1 个进程的参数完全相同</translation>
    </message>
    <message>
        <source>rank %1&apos;s parameters differ from the other ranks&apos; from %2 on: silent divergence, the signature of a hardware fault</source>
        <translation>第 %1 号进程的参数从 %2 起与其他进程不同：这是静默分歧，硬件故障的典型特征</translation>
    </message>
    <message>
        <source>recording %1: a Python training loop on %2, torch %3, %4</source>
        <translation>正在记录 %1：%2 上的 Python 训练循环，torch %3，%4</translation>
    </message>
    <message>
        <source>not measured: %1: a TorchScript module takes no Python hooks: its calls&apos; outputs and gradients are not measured (its parameters and their gradients are)</source>
        <translation>未测量：%1：TorchScript 模块不接受 Python 钩子，它各次调用的输出和梯度没有测量（它的参数及其梯度有测量）</translation>
    </message>
    <message>
        <source>not measured: %1: its calls are not measured (%2)</source>
        <translation>未测量：%1：它的调用没有测量（%2）</translation>
    </message>
    <message>
        <source>not measured: a tensor of this step: its layout %1 has no reductions</source>
        <translation>未测量：本步的一个张量：它的布局 %1 不支持归约</translation>
    </message>
    <message>
        <source>optimizer.step() was not called in this step</source>
        <translation>本步没有调用 optimizer.step()</translation>
    </message>
    <message>
        <source>the loss scaler skipped the update: the gradients overflowed</source>
        <translation>损失缩放器跳过了更新：梯度溢出</translation>
    </message>
    <message>
        <source>the gradient all-reduce brought NaN or Inf from another rank: this rank&apos;s own gradients were finite, and DistributedDataParallel averaged the others&apos; into them (`nanscope report FOLDER` names the rank where they were born)</source>
        <translation>梯度 all-reduce 从另一个进程（rank）带来了 NaN 或 Inf：本进程自己的梯度是有限的，DistributedDataParallel 把其他进程的梯度平均进来了（`nanscope report FOLDER` 会指出它们产生于哪个进程）</translation>
    </message>
    <message>
        <source>non-finite gradients: the update was skipped and the gradients zeroed</source>
        <translation>梯度含非有限值：已跳过本次更新并将梯度清零</translation>
    </message>
    <message>
        <source>non-finite gradients: the update was stopped and the loop raised NonFiniteError</source>
        <translation>梯度含非有限值：已阻止本次更新，训练循环抛出 NonFiniteError</translation>
    </message>
    <message>
        <source>non-finite gradients: restored the state of step %1 (parameters, buffers, optimizer), lr halved to %2</source>
        <translation>梯度含非有限值：已恢复第 %1 步的状态（参数、缓冲区、优化器），学习率减半为 %2</translation>
    </message>
    <message>
        <source>non-finite gradients and no checked-finite state kept yet: update skipped</source>
        <translation>梯度含非有限值，且尚未保存经检查为有限的状态：已跳过本次更新</translation>
    </message>
    <message>
        <source>non-finite gradients: the update was stopped and the loop told to stop</source>
        <translation>梯度含非有限值：已阻止本次更新，并通知训练循环停止</translation>
    </message>
    <message>
        <source>paused before the update of step %1: non-finite gradients; waiting up to %2 s for a decision (continue, skip, rollback, stop)</source>
        <translation>在第 %1 步更新前暂停：梯度含非有限值；最多等待 %2 秒以获得决定（继续、跳过、回滚、停止）</translation>
    </message>
    <message>
        <source>decided: %1, after %2 s (request %3)</source>
        <translation>已决定：%1，用时 %2 秒（请求 %3）</translation>
    </message>
    <message>
        <source>no decision within %1 s: %2, as pause_default says</source>
        <translation>%1 秒内未收到决定：按 pause_default 执行 %2</translation>
    </message>
    <message>
        <source>%1 (request %2)</source>
        <translation>%1（请求 %2）</translation>
    </message>
    <message>
        <source>request %2 refused: %1</source>
        <translation>请求 %2 被拒绝：%1</translation>
    </message>
    <message>
        <source>capsule of step %1 (%2): %3 KiB, too large for the run file: written beside it as %4 (keep the two together)</source>
        <translation>第 %1 步的胶囊（%2）：%3 KiB，超出运行文件的容量：已写在它旁边，名为 %4（请把两者放在一起）</translation>
    </message>
</context>
</TS>
