// The speed benchmark's case (a) in ns-3.44, written for wavelab's
// benches/compare_ns3.sh: the DCNET 2016 handover path, one NewReno flow,
// 360 simulated seconds, no traces (only two counters).
//
//   sender --100Mb/1ms-- r1 --8Mb/240ms, 100 pkt-- r2 --100Mb/1ms-- receiver
//
// At 300 s the bottleneck drops every packet in both directions for 2 s (a
// receive error model on both of its devices) and becomes 2 Mbit/s / 30 ms.
// Packets are 1000 bytes (960 bytes of payload + 40 of headers: no
// timestamps, no SACK); the receiver delays ACKs (every second segment, at
// most 200 ms); initial window 1; classic (RFC 6582) recovery instead of
// ns-3's default PRR; no queue discs, so each device's drop-tail queue is
// the only buffer, as in wavelab and ns-2. It prints one line of figures:
// the wall time of Simulator::Run (process start-up and set-up excluded),
// the simulated time, the IP packets the sender sent (data) and received
// (ACKs).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>

using namespace ns3;

static uint64_t g_sent = 0;
static uint64_t g_received = 0;

static void
CountSent(Ptr<const Packet>, Ptr<Ipv4>, uint32_t)
{
    ++g_sent;
}

static void
CountReceived(Ptr<const Packet>, Ptr<Ipv4>, uint32_t)
{
    ++g_received;
}

int
main(int argc, char* argv[])
{
    double duration = 360.0;
    CommandLine cmd;
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(960));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 26));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));

    NodeContainer n;
    n.Create(4);
    PointToPointHelper fast;
    fast.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    fast.SetChannelAttribute("Delay", StringValue("1ms"));
    fast.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    PointToPointHelper slow;
    slow.SetDeviceAttribute("DataRate", StringValue("8Mbps"));
    slow.SetChannelAttribute("Delay", StringValue("240ms"));
    slow.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100p"));
    NetDeviceContainer access = fast.Install(n.Get(0), n.Get(1));
    NetDeviceContainer bottleneck = slow.Install(n.Get(1), n.Get(2));
    NetDeviceContainer egress = fast.Install(n.Get(2), n.Get(3));

    InternetStackHelper stack;
    stack.Install(n);
    Ipv4AddressHelper address;
    address.SetBase("10.0.1.0", "255.255.255.0");
    address.Assign(access);
    address.SetBase("10.0.2.0", "255.255.255.0");
    address.Assign(bottleneck);
    address.SetBase("10.0.3.0", "255.255.255.0");
    Ipv4InterfaceContainer egressIf = address.Assign(egress);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    TrafficControlHelper tch;
    for (NetDeviceContainer* d : {&access, &bottleneck, &egress})
    {
        tch.Uninstall(*d);
    }

    // the outage: every packet the bottleneck's devices receive is lost
    Ptr<RateErrorModel> loss[2];
    for (uint32_t i = 0; i < 2; ++i)
    {
        loss[i] = CreateObject<RateErrorModel>();
        loss[i]->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        loss[i]->SetRate(1.0);
        loss[i]->Disable();
        bottleneck.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(loss[i]));
    }
    Simulator::Schedule(Seconds(300), [&]() {
        for (uint32_t i = 0; i < 2; ++i)
        {
            loss[i]->Enable();
            bottleneck.Get(i)->SetAttribute("DataRate", DataRateValue(DataRate("2Mbps")));
        }
        bottleneck.Get(0)->GetChannel()->SetAttribute("Delay", TimeValue(MilliSeconds(30)));
    });
    Simulator::Schedule(Seconds(302), [&]() {
        for (uint32_t i = 0; i < 2; ++i)
        {
            loss[i]->Disable();
        }
    });

    uint16_t port = 5000;
    BulkSendHelper source("ns3::TcpSocketFactory",
                          InetSocketAddress(egressIf.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    source.Install(n.Get(0)).Start(Seconds(0));
    PacketSinkHelper sink("ns3::TcpSocketFactory",
                          InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(n.Get(3)).Start(Seconds(0));

    Config::ConnectWithoutContext("/NodeList/0/$ns3::Ipv4L3Protocol/Tx",
                                  MakeCallback(&CountSent));
    Config::ConnectWithoutContext("/NodeList/0/$ns3::Ipv4L3Protocol/Rx",
                                  MakeCallback(&CountReceived));

    Simulator::Stop(Seconds(duration));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("ns3 wall_s %.6f sim_s %.3f data_sent %llu acks_received %llu\n",
                wall,
                Simulator::Now().GetSeconds(),
                static_cast<unsigned long long>(g_sent),
                static_cast<unsigned long long>(g_received));
    Simulator::Destroy();
    return 0;
}
